/** An API key as the gateway knows it; the key text itself is never stored, only its SHA-256. */
export interface ApiKey {
  id: string;
  userId: string;
  orgId: string | null;
  name: string | null;
  /** Model ids this key may use; null means every model. */
  allowedModels: string[] | null;
  /** Requests per minute this key may make; null for no limit. */
  rateLimit: number | null;
  revokedAt: number | null;
  createdAt: number;
  /** `inference`: the model endpoints; `management`: only the management API (/api/v1). */
  scope: KeyScope;
  /** Unix ms after which the key no longer works; null for never. */
  expiresAt: number | null;
  /** A disabled key is refused (401) until enabled again; unlike revocation this can be undone. */
  disabled: boolean;
  /** Most the key may spend per UTC calendar period; null for no limit. */
  limit: SpendLimit | null;
  /** Tokens per minute this key may use; null for no limit. */
  tpm: number | null;
}

/** A key as its lists and views show it: with what is stored about it beyond what authentication needs. */
export interface KeyRecord extends ApiKey {
  /** The key text's first characters (`tg-ab12`), so its owner can tell keys apart; the rest is never stored. */
  start: string;
  /** When the key last authenticated, as written (at most once a minute per key); null for never. */
  lastUsedAt: number | null;
}

export type KeyScope = 'inference' | 'management';
export const KEY_SCOPES: readonly KeyScope[] = ['inference', 'management'];
export type SpendPeriod = 'day' | 'week' | 'month' | 'total';
export const SPEND_PERIODS: readonly SpendPeriod[] = ['day', 'week', 'month', 'total'];

export interface SpendLimit {
  /** Money (nano-units). */
  amount: bigint;
  period: SpendPeriod;
}

/** Whether the key may be used now: not revoked, not disabled, not expired. */
export const isLive = (key: ApiKey, now: number): boolean => key.revokedAt === null && !key.disabled && (key.expiresAt === null || key.expiresAt > now);

/** What a caller of `KeysService.create` chooses about a new key. */
export interface NewKeyInput {
  userId: string;
  orgId: string | null;
  name: string | null;
  allowedModels: string[] | null;
  rateLimit?: number | null;
  scope?: KeyScope;
  expiresAt?: number | null;
  limit?: SpendLimit | null;
  tpm?: number | null;
}

/** What an edit may change about a key; absent fields stay as they are. */
export interface KeyChanges {
  name?: string | null;
  scope?: KeyScope;
  allowedModels?: string[] | null;
  expiresAt?: number | null;
  limit?: SpendLimit | null;
  rateLimit?: number | null;
  tpm?: number | null;
  disabled?: boolean;
}

/** Which keys a list shows, newest first. */
export interface KeyQuery {
  userId?: string;
  orgId?: string;
  /** Part of the key's name, id or start (case-insensitive). */
  query?: string;
  /** Revoked keys are left out unless asked for. */
  includeRevoked?: boolean;
  limit: number;
  /** Keys older than this cursor (from the previous page's `nextCursor`). */
  cursor?: string;
}

export interface KeysRepository {
  insert(key: ApiKey, keyHash: string, keyPrefix: string): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKey | undefined>;
  get(id: string): Promise<KeyRecord | undefined>;
  /** Marks the key revoked; returns its hash, or undefined when there is no such live key. */
  revoke(id: string, at: number): Promise<string | undefined>;
  /** Applies the changes to a live key; returns the key as it is now and its hash, or undefined when there is no such live key. */
  update(id: string, changes: KeyChanges): Promise<{ key: KeyRecord; hash: string } | undefined>;
  list(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | undefined }>;
  /** Notes when the keys were last used. */
  touch(ids: readonly string[], at: number): Promise<void>;
  /** What the key spent since `since` (a UTC midnight, Unix ms; or 0): Σ of its charges and refunds, charges counting positive. */
  spentSince(keyId: string, since: number): Promise<bigint>;
}
