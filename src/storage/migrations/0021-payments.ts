import type { Kysely } from 'kysely';

/**
 * Card top-ups (DESIGN §15): one row per Checkout Session. The vendor's events settle a row inside a transaction that locks
 * it and writes the ledger entries (whose ids follow from the event), so a redelivered or concurrent event moves money once:
 * `status` guards the credit, `refunded_minor` (the vendor's cumulative `amount_refunded`) the refunds, `lost_dispute` a lost
 * dispute.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('payments')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('session_id', 'text', (column) => column.notNull().unique())
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('amount_minor', 'bigint', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('payment_intent', 'text')
    .addColumn('refunded_minor', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('lost_dispute', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('paid_at', 'bigint')
    .execute();
  await db.schema.createIndex('payments_account').on('payments').columns(['account_type', 'account_id', 'id']).execute();
  await db.schema.createIndex('payments_intent').on('payments').column('payment_intent').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('payments').execute();
}
