import { sql, type Kysely } from 'kysely';

/**
 * The request log with two secondary indexes instead of three (DESIGN §13: each row is written on the hot path's CPU, and
 * every index is one more b-tree insert and more pages to commit). Every row of a user's account has that user as
 * `user_id` (a key pays from its own user's wallet or from its org), so one index per user serves the user's account, the
 * admin's user filter and a key's rows (under the key's owner); orgs get a partial index of their own. The columns ascend
 * (listings read them backwards, newest first): a new row lands at the right end of its range, where SQLite fills pages
 * instead of splitting them in half — 18 % fewer pages written than with `created_at desc`. They carry no extra columns:
 * a filtered listing looks each row up either way (100,000 rows of one user, a key with none of them: 35 ms with the key
 * in the index, 36 without), and the bare entries cost 0.4 µs less a row.
 * Measured (a batch of 700 rows, insert and commit): 5.9 → 3.6 µs a row for one user, 11.5 → 5.6 µs for fifty.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index request_log_by_user on request_log (user_id, created_at, id)`.execute(db);
  await sql`create index request_log_by_org on request_log (account_id, created_at, id) where account_type = 'org'`.execute(db);
  for (const name of ['request_log_account', 'request_log_user', 'request_log_key']) await sql`drop index if exists ${sql.id(name)}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`create index request_log_account on request_log (account_type, account_id, created_at desc, id desc)`.execute(db);
  await sql`create index request_log_user on request_log (user_id, created_at desc, id desc)`.execute(db);
  await sql`create index request_log_key on request_log (key_id, created_at desc)`.execute(db);
  for (const name of ['request_log_by_user', 'request_log_by_org']) await sql`drop index if exists ${sql.id(name)}`.execute(db);
}
