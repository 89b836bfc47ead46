import { sql, type Kysely } from 'kysely';

/**
 * What each API key spent each UTC day (issue 16): Σ of its charges and refunds, charges counting positive, kept by the
 * ledger write that inserts them (in its transaction, as balances are). A key's spend in its limit's period is then the
 * sum of at most 31 rows (a month), not of every entry it made in the period: summing the ledger read every entry of the
 * key through `ledger_key_time`: for a key with 1,000,000 entries in its month 120 ms on SQLite (the event loop waiting) and
 * 110 ms on PostgreSQL, every 30 s for each key in use with a limit, and in every ledger batch when key-limit mails are on;
 * summing its days, 0.14 and 0.7 ms (bench:ledger).
 *
 * The days written before this migration are summed from the ledger once. `ledger_key_time` served only that sum; it goes,
 * and with it one b-tree insert for every entry written.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('key_spend_daily')
    .addColumn('key_id', 'text', (column) => column.notNull())
    // The day's UTC midnight, Unix ms.
    .addColumn('day', 'bigint', (column) => column.notNull())
    .addColumn('spent_nano', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('key_spend_daily_pk', ['key_id', 'day'])
    .execute();
  await sql`insert into key_spend_daily (key_id, day, spent_nano)
    select key_id, (created_at / 86400000) * 86400000, -sum(amount_nano) from ledger
    where key_id is not null and kind in ('charge', 'refund')
    group by key_id, (created_at / 86400000) * 86400000`.execute(db);
  await db.schema.dropIndex('ledger_key_time').ifExists().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('ledger_key_time').on('ledger').columns(['key_id', 'created_at']).execute();
  await db.schema.dropTable('key_spend_daily').execute();
}
