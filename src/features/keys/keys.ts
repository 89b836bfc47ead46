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
}

/** What a caller of `KeysService.create` chooses about a new key. */
export interface NewKeyInput {
  userId: string;
  orgId: string | null;
  name: string | null;
  allowedModels: string[] | null;
  rateLimit?: number | null;
}

export interface KeysRepository {
  insert(key: ApiKey, keyHash: string, keyPrefix: string): Promise<void>;
  findByHash(keyHash: string): Promise<ApiKey | undefined>;
  get(id: string): Promise<ApiKey | undefined>;
  /** Marks the key revoked; returns its hash, or undefined when there is no such live key. */
  revoke(id: string, at: number): Promise<string | undefined>;
}
