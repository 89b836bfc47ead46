import type { Kysely } from 'kysely';

/**
 * `Idempotency-Key` of money-moving admin calls (DESIGN §4): the same key and body give the first result again and move money
 * once. `entry_id` is the ledger entry the call writes, fixed before it is written, so a retry after a crash writes the same
 * entry (ledger ids are unique) instead of a second one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (column) => column.notNull())
    .addColumn('key', 'text', (column) => column.notNull())
    .addColumn('request_hash', 'text', (column) => column.notNull())
    .addColumn('entry_id', 'text', (column) => column.notNull())
    .addColumn('response', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
}
