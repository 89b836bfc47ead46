import type { Kysely } from 'kysely';

/**
 * Vouchers (DESIGN §4, §10): prepaid codes the operator hands out and a customer redeems once. Only the SHA-256 of a code
 * is stored (a database dump hands out no money); `code_start` lets the operator tell codes apart in lists. A redemption
 * sets `redeemed_at` and `ledger_id` in the same transaction as the credit, guarded by `redeemed_at is null`, so two
 * concurrent redemptions credit once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('vouchers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('code_hash', 'text', (column) => column.notNull().unique())
    .addColumn('code_start', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('voided_at', 'bigint')
    .addColumn('redeemed_at', 'bigint')
    .addColumn('redeemed_by', 'text')
    .addColumn('account_type', 'text')
    .addColumn('account_id', 'text')
    .addColumn('ledger_id', 'text')
    .execute();
  await db.schema.createIndex('vouchers_time').on('vouchers').columns(['created_at', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('vouchers').execute();
}
