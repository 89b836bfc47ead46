import type { Kysely } from 'kysely';

/**
 * Responses made through `POST /v1/responses` (DESIGN §12): who made each id (the account and key), so `GET
 * /v1/responses/:id` and `previous_response_id` answer only that account, also for ids the vendor keeps. For translated
 * (Claude) models the gateway keeps what the vendor cannot: the rendered response and the conversation that continues
 * it (`store` not false). Rows older than TOLLGATE_RESPONSES_DAYS are deleted.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('translated', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('previous_response_id', 'text')
    .addColumn('conversation', 'text')
    .addColumn('body', 'text')
    .execute();
  await db.schema.createIndex('responses_time').on('responses').columns(['created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('responses').execute();
}
