import type { Kysely } from 'kysely';

/** The chat-bot integration: bots, their dialogs, the inbound events seen (for de-duplication) and the outbound queue. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bots')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('org_id', 'text')
    .addColumn('assistant_id', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('token_sealed', 'text', (column) => column.notNull())
    .addColumn('webhook_url', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('bot_dialogs')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('bot_id', 'text', (column) => column.notNull())
    .addColumn('chat_id', 'text', (column) => column.notNull())
    .addColumn('client_id', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('bot_dialogs_chat').on('bot_dialogs').columns(['bot_id', 'chat_id', 'state']).execute();
  await db.schema
    .createTable('bot_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('bot_id', 'text', (column) => column.notNull())
    .addColumn('event_id', 'text', (column) => column.notNull())
    .addColumn('event', 'text', (column) => column.notNull())
    .addColumn('dialog_id', 'text')
    .addColumn('payload', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('bot_events_once', ['bot_id', 'event_id'])
    .execute();
  await db.schema
    .createTable('bot_outbox')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('bot_id', 'text', (column) => column.notNull())
    .addColumn('seq', 'bigint', (column) => column.notNull())
    .addColumn('payload', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
    .addColumn('claimed_until', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('delivered_at', 'bigint')
    .execute();
  await db.schema.createIndex('bot_outbox_queue').on('bot_outbox').columns(['bot_id', 'status', 'seq']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['bot_outbox', 'bot_events', 'bot_dialogs', 'bots']) await db.schema.dropTable(table).execute();
}
