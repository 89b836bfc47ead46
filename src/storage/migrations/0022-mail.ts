import type { Kysely } from 'kysely';

/**
 * Mail (DESIGN §15): an outbox of rendered messages, each sent by a `mail.send` job (the message and its job commit with
 * their cause). `dedupe_key` is unique, so an alert that several processes notice at once is queued once (a key's 80 % of
 * its limit in one period). Single-use links of the accounts (password reset, email change) keep only the token's SHA-256.
 * A low-balance threshold per user and per org; the ledger write compares each balance before and after against it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('mail_outbox')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('to_address', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('text_body', 'text', (column) => column.notNull())
    .addColumn('html_body', 'text', (column) => column.notNull())
    .addColumn('message_id', 'text', (column) => column.notNull())
    .addColumn('dedupe_key', 'text', (column) => column.unique())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('sent_at', 'bigint')
    .execute();
  await db.schema.createIndex('mail_outbox_status').on('mail_outbox').columns(['status']).execute();
  await db.schema
    .createTable('account_tokens')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('email', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('account_tokens_user').on('account_tokens').columns(['user_id', 'purpose']).execute();
  await db.schema.alterTable('users').addColumn('low_balance_alert_nano', 'bigint').execute();
  await db.schema.alterTable('orgs').addColumn('low_balance_alert_nano', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('orgs').dropColumn('low_balance_alert_nano').execute();
  await db.schema.alterTable('users').dropColumn('low_balance_alert_nano').execute();
  await db.schema.dropTable('account_tokens').execute();
  await db.schema.dropTable('mail_outbox').execute();
}
