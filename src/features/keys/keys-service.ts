import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import type { ChangeBus } from '../../lib/change-bus.ts';
import type { Money } from '../../lib/money.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import { ADMIN_ACTOR, type AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { KeyLimits } from './key-limits.ts';
import { isLive, type ApiKey, type KeyChanges, type KeyQuery, type KeyRecord, type KeysRepository, type NewKeyInput } from './keys.ts';
import type { LastUsedRecorder } from './last-used.ts';
import { OpenStreams } from './open-streams.ts';
import type { Abortable } from '../../lib/call-abort.ts';

const KEY_PREFIX = 'tg-';
/** Safety net only: revocations and creations invalidate at once through the change bus. */
const CACHE_TTL_MS = 60_000;
const CACHE_LIMIT = 100_000;

interface CacheEntry {
  key: ApiKey | null;
  loadedAt: number;
}

/** What the key management doors show about a key: the stored key with its spending in the limit's period. */
export interface KeyDetails {
  key: KeyRecord;
  spent: Money;
  /** Null without a limit. */
  remaining: Money | null;
}

/** The parts of the keys feature that watch use: limits, spend and last use; and the audit log its changes go to. */
export interface KeysServiceParts {
  limits: KeyLimits;
  lastUsed: LastUsedRecorder;
  audit: Pick<AuditService, 'record'>;
}

/** What the audit log keeps of a key (never its text or hash). */
const auditView = (key: ApiKey) => ({
  name: key.name,
  userId: key.userId,
  orgId: key.orgId,
  scope: key.scope,
  allowedModels: key.allowedModels,
  expiresAt: key.expiresAt,
  disabled: key.disabled,
  limit: key.limit ? { amount: key.limit.amount.toString(), period: key.limit.period } : null,
  rpm: key.rateLimit,
  tpm: key.tpm,
});

/** Issues, authenticates and revokes API keys; authentication is served from memory on the hot path. */
export class KeysService {
  private readonly cache = new Map<string, CacheEntry>();
  /** Streams being answered by this process, by key; cut when their key is revoked anywhere. */
  readonly openStreams = new OpenStreams();

  constructor(
    private readonly repository: KeysRepository,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
    private readonly accounts: Pick<AccountsService, 'getUser' | 'getOrg' | 'getRole'>,
    private readonly catalog: Pick<CatalogService, 'get'>,
    private readonly parts: KeysServiceParts,
  ) {
    bus.subscribe((topic, hash) => {
      if (topic !== 'keys') return;
      if (hash) this.cache.delete(hash);
      else this.cache.clear();
      // Revocations travel on this topic from every node; a key with streams open here is checked and its streams cut.
      if (hash && this.openStreams.has(hash)) void this.cutIfRevoked(hash);
    });
  }

  /** Tracks a stream opened with the key of this hash (`authenticateText`'s); the returned function forgets it. */
  trackStream(keyHash: string, controller: Abortable): () => void {
    return this.openStreams.track(keyHash, controller);
  }

  private async cutIfRevoked(hash: string): Promise<void> {
    try {
      const found = await this.repository.findByHash(hash);
      if (!found || found.revokedAt !== null) this.openStreams.cut(hash, new GatewayError('unauthorized', 'This API key was revoked.'));
    } catch {
      // The database is unreachable: the key's cache entry is already dropped, so its next request is checked again.
    }
  }

  /**
   * Creates a key; the returned text is shown to the caller once and never stored. Every door (admin API, CLI, first start)
   * gets the same checks: the user exists; a business key's org exists and the user is a member of it; every allowed model
   * exists (a misspelt id would silently lock the key out of that model).
   */
  async create(input: NewKeyInput, actor: Actor = ADMIN_ACTOR): Promise<{ key: ApiKey; text: string }> {
    await this.check(input);
    this.checkChanges(input);
    const text = KEY_PREFIX + randomBase62(40);
    const key: ApiKey = {
      id: newId('key'),
      userId: input.userId,
      orgId: input.orgId,
      name: input.name,
      allowedModels: input.allowedModels,
      rateLimit: input.rateLimit ?? null,
      revokedAt: null,
      createdAt: this.clock.now(),
      scope: input.scope ?? 'inference',
      expiresAt: input.expiresAt ?? null,
      disabled: false,
      limit: input.limit ?? null,
      tpm: input.tpm ?? null,
    };
    const hash = sha256Hex(text);
    await this.repository.insert(key, hash, text.slice(0, 7));
    await this.bus.publish('keys', hash);
    await this.parts.audit.record(actor, 'key.create', { type: 'key', id: key.id }, { after: auditView(key), orgId: key.orgId });
    return { key, text };
  }

  private async check(input: NewKeyInput): Promise<void> {
    if (!(await this.accounts.getUser(input.userId))) throw new GatewayError('not_found', `User '${input.userId}' does not exist.`, { param: 'userId' });
    if (input.orgId) {
      if (!(await this.accounts.getOrg(input.orgId))) throw new GatewayError('not_found', `Organization '${input.orgId}' does not exist.`, { param: 'orgId' });
      if (!(await this.accounts.getRole(input.orgId, input.userId))) {
        throw new GatewayError('invalid_request', `orgId: user '${input.userId}' is not a member of '${input.orgId}'`, { param: 'orgId' });
      }
    }
  }

  /** Rules every door's changes meet: an expiry lies ahead, a spend limit is positive, allowed models exist. */
  private checkChanges(changes: KeyChanges): void {
    if (changes.expiresAt != null && changes.expiresAt <= this.clock.now()) {
      throw new GatewayError('invalid_request', 'expiresAt: must be in the future', { param: 'expiresAt' });
    }
    if (changes.limit && changes.limit.amount <= 0n) throw new GatewayError('invalid_request', 'limit.amount: must be greater than 0', { param: 'limit.amount' });
    const unknown = (changes.allowedModels ?? []).find((id) => !this.catalog.get(id));
    if (unknown !== undefined) throw new GatewayError('invalid_request', `allowedModels: model '${unknown}' does not exist`, { param: 'allowedModels' });
  }

  /** The live key for this text, or undefined (unknown, revoked, disabled or expired). */
  async authenticate(text: string): Promise<ApiKey | undefined> {
    return (await this.authenticateText(text))?.key;
  }

  /**
   * `authenticate`, with the hash of the text the key was found by (a stream is tracked by it: hashed once a request). No
   * promise for a key found in the cache: it runs on every request.
   */
  authenticateText(text: string): { key: ApiKey; hash: string } | undefined | Promise<{ key: ApiKey; hash: string } | undefined> {
    if (text.length < 8 || text.length > 200) return undefined;
    const hash = sha256Hex(text);
    const now = this.clock.now();
    const cached = this.cache.get(hash);
    if (cached && now - cached.loadedAt < CACHE_TTL_MS) return cached.key && isLive(cached.key, now) ? { key: cached.key, hash } : undefined;
    return this.load(hash, now);
  }

  private async load(hash: string, now: number): Promise<{ key: ApiKey; hash: string } | undefined> {
    const found = (await this.repository.findByHash(hash)) ?? null;
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    // The key is cached even when not live now (disabled, expired): an edit publishes on the bus and drops it.
    this.cache.set(hash, { key: found && found.revokedAt === null ? found : null, loadedAt: now });
    return found && isLive(found, now) ? { key: found, hash } : undefined;
  }

  /**
   * Admits one request made with an authenticated key: its requests and tokens per minute (429), and notes its use. Spend
   * limits are checked where a call is billed (`checkSpend`, from prepareModelCall), so free endpoints stay free of them.
   */
  admit(key: ApiKey): void | Promise<void> {
    this.parts.lastUsed.touch(key.id);
    return this.parts.limits.admit(key);
  }

  get limits(): KeyLimits {
    return this.parts.limits;
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    return this.repository.get(id);
  }

  async list(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | undefined }> {
    return this.repository.list(query);
  }

  /** The key with its spending and its last use as this process knows it. */
  async details(key: KeyRecord): Promise<KeyDetails> {
    const { spent, remaining } = await this.parts.limits.spending(key);
    return { key: { ...key, lastUsedAt: this.parts.lastUsed.lastUsedAt(key.id, key.lastUsedAt) }, spent, remaining };
  }

  /** Changes a live key; every process sees the change at once. Undefined when there is no such live key. */
  async update(id: string, changes: KeyChanges, actor: Actor = ADMIN_ACTOR): Promise<KeyRecord | undefined> {
    const before = await this.repository.get(id);
    if (!before || before.revokedAt !== null) return undefined;
    this.checkChanges(changes);
    const updated = await this.repository.update(id, changes);
    if (!updated) return undefined;
    await this.bus.publish('keys', updated.hash);
    await this.parts.audit.record(actor, 'key.update', { type: 'key', id }, { before: auditView(before), after: auditView(updated.key), orgId: updated.key.orgId });
    return updated.key;
  }

  /** Revokes a key; every process stops accepting it at once, and streams open with it are cut. */
  /** Revokes every live key of a user in an org (the user left it or was removed: their business keys must not charge it). */
  async revokeMemberKeys(orgId: string, userId: string, actor: Actor): Promise<number> {
    let revoked = 0;
    let cursor: string | undefined;
    do {
      const page = await this.repository.list({ orgId, userId, limit: 100, ...(cursor ? { cursor } : {}) });
      for (const key of page.keys) if (await this.revoke(key.id, actor)) revoked += 1;
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return revoked;
  }

  async revoke(id: string, actor: Actor = ADMIN_ACTOR): Promise<boolean> {
    const before = await this.repository.get(id);
    const hash = await this.repository.revoke(id, this.clock.now());
    if (hash === undefined) return false;
    await this.bus.publish('keys', hash);
    await this.parts.audit.record(actor, 'key.revoke', { type: 'key', id }, { before: before ? auditView(before) : null, orgId: before?.orgId ?? null });
    return true;
  }

  /** Waits for last-use writes under way (a clean stop). */
  async close(): Promise<void> {
    await this.parts.lastUsed.settle();
  }
}
