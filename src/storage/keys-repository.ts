import { PostgresAdapter, sql, type Kysely, type Selectable, type Transaction, type Updateable } from 'kysely';
import type { LimitedKey, LimitedKeys } from '../features/mail/key-limit-alerts.ts';
import type { ApiKey, KeyChanges, KeyQuery, KeyRecord, KeysRepository } from '../features/keys/keys.ts';
import { utcDayStart } from '../features/keys/spend-periods.ts';
import { moneyTextOrNull } from './money-sql.ts';
import type { ApiKeysTable, Database } from './schema.ts';

const toKey = (row: Selectable<ApiKeysTable>): KeyRecord => ({
  id: row.id,
  userId: row.user_id,
  orgId: row.org_id,
  name: row.name,
  allowedModels: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
  rateLimit: row.rate_limit,
  revokedAt: row.revoked_at,
  createdAt: row.created_at,
  scope: row.scope ?? 'inference',
  expiresAt: row.expires_at === null ? null : Number(row.expires_at),
  disabled: row.disabled === 1,
  limit: row.spend_limit_nano !== null && row.spend_period !== null ? { amount: BigInt(row.spend_limit_nano), period: row.spend_period } : null,
  tpm: row.tpm,
  start: row.key_prefix,
  lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
});

/** Cursor of a page: the last key's creation time and id (keys are ordered by both, newest first). */
const encodeCursor = (key: KeyRecord): string => Buffer.from(`${key.createdAt}:${key.id}`).toString('base64url');
function decodeCursor(cursor: string): { at: number; id: string } | undefined {
  const [at, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':');
  return at && id && /^\d+$/.test(at) ? { at: Number(at), id } : undefined;
}

function columnsOf(changes: KeyChanges): Updateable<ApiKeysTable> {
  const row: Updateable<ApiKeysTable> = {};
  if (changes.name !== undefined) row.name = changes.name;
  if (changes.scope !== undefined) row.scope = changes.scope;
  if (changes.allowedModels !== undefined) row.allowed_models = changes.allowedModels === null ? null : JSON.stringify(changes.allowedModels);
  if (changes.expiresAt !== undefined) row.expires_at = changes.expiresAt;
  if (changes.limit !== undefined) {
    row.spend_limit_nano = changes.limit?.amount ?? null;
    row.spend_period = changes.limit?.period ?? null;
  }
  if (changes.rateLimit !== undefined) row.rate_limit = changes.rateLimit;
  if (changes.tpm !== undefined) row.tpm = changes.tpm;
  if (changes.disabled !== undefined) row.disabled = changes.disabled ? 1 : 0;
  return row;
}

/** Money read exactly (as text) on both engines. */
const KEY_COLUMNS = ['id', 'key_hash', 'key_prefix', 'user_id', 'org_id', 'name', 'allowed_models', 'rate_limit', 'revoked_at', 'created_at', 'scope', 'expires_at', 'disabled', moneyTextOrNull('spend_limit_nano').as('spend_limit_nano'), 'spend_period', 'tpm', 'last_used_at'] as const;

export class SqlKeysRepository implements KeysRepository, LimitedKeys {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(key: ApiKey, keyHash: string, keyPrefix: string): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: key.id,
        key_hash: keyHash,
        key_prefix: keyPrefix,
        user_id: key.userId,
        org_id: key.orgId,
        name: key.name,
        allowed_models: key.allowedModels === null ? null : JSON.stringify(key.allowedModels),
        rate_limit: key.rateLimit,
        revoked_at: key.revokedAt,
        created_at: key.createdAt,
        scope: key.scope,
        expires_at: key.expiresAt,
        disabled: key.disabled ? 1 : 0,
        spend_limit_nano: key.limit?.amount ?? null,
        spend_period: key.limit?.period ?? null,
        tpm: key.tpm,
      })
      .execute();
  }

  async findByHash(keyHash: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').select(KEY_COLUMNS).where('key_hash', '=', keyHash).executeTakeFirst();
    return row && toKey(row);
  }

  async get(id: string): Promise<KeyRecord | undefined> {
    const row = await this.db.selectFrom('api_keys').select(KEY_COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toKey(row);
  }

  async revoke(id: string, at: number): Promise<string | undefined> {
    const row = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .returning('key_hash')
      .executeTakeFirst();
    return row?.key_hash;
  }

  async update(id: string, changes: KeyChanges): Promise<{ key: KeyRecord; hash: string } | undefined> {
    const columns = columnsOf(changes);
    if (Object.keys(columns).length > 0) {
      await this.db.updateTable('api_keys').set(columns).where('id', '=', id).where('revoked_at', 'is', null).execute();
    }
    const row = await this.db.selectFrom('api_keys').select(KEY_COLUMNS).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return row && { key: toKey(row), hash: row.key_hash };
  }

  async list(query: KeyQuery): Promise<{ keys: KeyRecord[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('api_keys').select(KEY_COLUMNS);
    if (query.userId !== undefined) select = select.where('user_id', '=', query.userId);
    if (query.orgId !== undefined) select = select.where('org_id', '=', query.orgId);
    if (!query.includeRevoked) select = select.where('revoked_at', 'is', null);
    if (query.query) {
      const pattern = `%${query.query.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
      const like = (column: string) => sql<boolean>`lower(coalesce(${sql.ref(column)}, '')) like ${pattern} escape '\\'`;
      select = select.where((eb) => eb.or([like('name'), like('id'), like('key_prefix')]));
    }
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    if (after) select = select.where((eb) => eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('id', '<', after.id)])]));
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit + 1).execute();
    const keys = rows.slice(0, query.limit).map(toKey);
    return { keys, nextCursor: rows.length > query.limit ? encodeCursor(keys[keys.length - 1]!) : undefined };
  }

  async touch(ids: readonly string[], at: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', 'in', [...ids]).execute();
  }

  /**
   * Σ of the key's days from `since` in key_spend_daily, which the ledger write keeps: at most a period's days are read,
   * however many entries the key made in them. `since` is a UTC midnight (every period starts at one), or 0.
   */
  async spentSince(keyId: string, since: number, transaction?: unknown): Promise<bigint> {
    if (since !== utcDayStart(since)) throw new RangeError(`spend is kept by UTC day: ${since} is not a UTC midnight`);
    const row = await ((transaction as Transaction<Database> | undefined) ?? this.db)
      .selectFrom('key_spend_daily')
      .select(sql<string | null>`cast(sum(spent_nano) as text)`.as('total'))
      .where('key_id', '=', keyId)
      .where('day', '>=', since)
      .executeTakeFirst();
    return BigInt(row?.total ?? '0');
  }

  /**
   * Key-limit alerts: the keys with a limit among `ids`, each locked for the rest of the transaction. PostgreSQL: a
   * transaction-level advisory lock per key, taken in id order (not the key's row, which last-used updates write in any
   * order); SQLite has one writer at a time.
   */
  async lockLimited(ids: readonly string[], transaction: unknown): Promise<LimitedKey[]> {
    const trx = transaction as Transaction<Database>;
    if (ids.length === 0) return [];
    const rows = await trx
      .selectFrom('api_keys')
      .select(['id', 'user_id', 'name', 'spend_period', moneyTextOrNull('spend_limit_nano').as('limit')])
      .where('id', 'in', [...ids])
      .where('spend_limit_nano', 'is not', null)
      .orderBy('id')
      .execute();
    const keys: LimitedKey[] = [];
    for (const row of rows) {
      if (row.limit === null || row.spend_period === null) continue;
      if (this.postgres) await sql`select pg_advisory_xact_lock(hashtextextended(${`key-spend:${row.id}`}, 0))`.execute(trx);
      keys.push({ id: row.id, userId: row.user_id, name: row.name, limit: { amount: BigInt(row.limit), period: row.spend_period } });
    }
    return keys;
  }
}
