import type { Kysely, Selectable } from 'kysely';
import type { ApiKey, KeysRepository } from '../features/keys/keys.ts';
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
});

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
      })
      .execute();
  }

  async findByHash(keyHash: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
    return row && toKey(row);
  }

  async get(id: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
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
