import type { Kysely } from 'kysely';

/**
 * What each gateway process has reserved of an account's balance (DESIGN §14: several processes on one balance overdraw it by
 * at most the requests in flight). A row is one process's reservation; it lapses at `expires_at` if the process dies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('balance_leases')
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('node', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('balance_leases_pk', ['account_type', 'account_id', 'node'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('balance_leases').execute();
}
