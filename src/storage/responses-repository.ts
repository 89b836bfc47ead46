import type { Kysely } from 'kysely';
import type { JsonObject } from '../core/chat-types.ts';
import type { ResponsesRepository, StoredResponse } from '../features/responses/stored-responses.ts';
import type { Database, ResponsesTable } from './schema.ts';

const parse = <T>(text: string | null): T | null => (text === null ? null : (JSON.parse(text) as T));

const toStored = (row: ResponsesTable): StoredResponse => ({
  id: row.id,
  owner: { type: row.account_type, id: row.account_id },
  keyId: row.key_id,
  model: row.model,
  provider: row.provider,
  channel: row.channel ?? null,
  translated: Number(row.translated) === 1,
  createdAt: Number(row.created_at),
  previousResponseId: row.previous_response_id,
  conversation: parse<JsonObject[]>(row.conversation),
  body: parse<JsonObject>(row.body),
});

/** Stored responses (migration 0020) on SQLite and PostgreSQL: plain rows, JSON kept as text. */
export class SqlResponsesRepository implements ResponsesRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(response: StoredResponse): Promise<void> {
    await this.db
      .insertInto('responses')
      .values({
        id: response.id,
        account_type: response.owner.type,
        account_id: response.owner.id,
        key_id: response.keyId,
        model: response.model,
        provider: response.provider,
        channel: response.channel,
        translated: response.translated ? 1 : 0,
        created_at: response.createdAt,
        previous_response_id: response.previousResponseId,
        conversation: response.conversation === null ? null : JSON.stringify(response.conversation),
        body: response.body === null ? null : JSON.stringify(response.body),
      })
      // A vendor id seen twice (a retried relay) keeps its first owner.
      .onConflict((conflict) => conflict.column('id').doNothing())
      .execute();
  }

  async get(id: string): Promise<StoredResponse | undefined> {
    const row = await this.db.selectFrom('responses').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toStored(row) : undefined;
  }

  async deleteBefore(cutoff: number): Promise<number> {
    const result = await this.db.deleteFrom('responses').where('created_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
