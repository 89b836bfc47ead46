import type { Kysely } from 'kysely';
import type { IdempotencyClaim, IdempotencyRepository } from '../features/billing/idempotency.ts';
import type { Database } from './schema.ts';

export class SqlIdempotencyRepository implements IdempotencyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async claim(scope: string, key: string, requestHash: string, entryId: string, now: number): Promise<IdempotencyClaim> {
    // Insert-or-keep, then read: two requests with one key at once both read the single row that won.
    await this.db
      .insertInto('idempotency_keys')
      .values({ scope, key, request_hash: requestHash, entry_id: entryId, response: null, created_at: now })
      .onConflict((conflict) => conflict.columns(['scope', 'key']).doNothing())
      .execute();
    const row = await this.db
      .selectFrom('idempotency_keys')
      .select(['request_hash', 'entry_id', 'response'])
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    return { requestHash: row.request_hash, entryId: row.entry_id, response: row.response };
  }

  async complete(scope: string, key: string, response: string): Promise<void> {
    await this.db.updateTable('idempotency_keys').set({ response }).where('scope', '=', scope).where('key', '=', key).execute();
  }
}
