import type { Kysely, Selectable } from 'kysely';
import type { ApiKey, KeysRepository } from '../features/keys/keys.ts';
import { moneyTextOrNull } from './money-sql.ts';
import type { ApiKeysTable, Database } from './schema.ts';

const toKey = (row: Selectable<ApiKeysTable>): ApiKey => ({
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
});

/** Money read exactly (as text) on both engines. */
const KEY_COLUMNS = ['id', 'key_hash', 'key_prefix', 'user_id', 'org_id', 'name', 'allowed_models', 'rate_limit', 'revoked_at', 'created_at', 'scope', 'expires_at', 'disabled', moneyTextOrNull('spend_limit_nano').as('spend_limit_nano'), 'spend_period', 'tpm', 'last_used_at'] as const;

export class SqlKeysRepository implements KeysRepository {
  constructor(private readonly db: Kysely<Database>) {}

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

  async get(id: string): Promise<ApiKey | undefined> {
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
}
