import { PostgresAdapter, sql, type Kysely } from 'kysely';

/** The log's columns (0028 rebuilds the SQLite table with them). */
export const requestLogColumns = sql`
    id text not null,
    created_at bigint not null,
    account_type text not null,
    account_id text not null,
    key_id text not null,
    user_id text not null,
    org_id text,
    endpoint text not null,
    model text,
    served_model text,
    provider text,
    channel text,
    attempts integer not null,
    stream integer not null,
    status integer not null,
    error_type text,
    input_tokens bigint not null,
    output_tokens bigint not null,
    cache_read_tokens bigint not null,
    cache_write_tokens bigint not null,
    cost_nano bigint not null,
    latency_ms integer not null,
    ttft_ms integer,
    task_id text`;

/**
 * The request log (one row per authenticated request, kept TOLLGATE_REQUEST_LOG_DAYS) and its daily rollups (kept for
 * good; they answer /usage). On PostgreSQL the log is partitioned by day on `created_at` (Unix ms), so retention drops whole
 * partitions instead of deleting rows; partitions are created ahead by the writer (request-log-repository.ts), and a default
 * partition takes any row whose day has none yet, so an insert never fails for want of a partition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const columns = requestLogColumns;
  if (postgres) {
    await sql`create table request_log (${columns}, primary key (created_at, id)) partition by range (created_at)`.execute(db);
    await sql`create table request_log_default partition of request_log default`.execute(db);
  } else {
    await sql`create table request_log (${columns}, primary key (id))`.execute(db);
  }
  // Newest first per account (the console's request list), per key and per user (filters), by time (retention, admin view).
  await sql`create index request_log_account on request_log (account_type, account_id, created_at desc, id desc)`.execute(db);
  await sql`create index request_log_user on request_log (user_id, created_at desc, id desc)`.execute(db);
  await sql`create index request_log_key on request_log (key_id, created_at desc)`.execute(db);
  await sql`create index request_log_time on request_log (created_at desc, id desc)`.execute(db);
  await sql`create index request_log_task on request_log (task_id) where task_id is not null`.execute(db);
  await db.schema
    .createTable('usage_daily')
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('day', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('requests', 'bigint', (column) => column.notNull())
    .addColumn('errors', 'bigint', (column) => column.notNull())
    .addColumn('input_tokens', 'bigint', (column) => column.notNull())
    .addColumn('output_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cache_read_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cache_write_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('usage_daily_pk', ['account_type', 'account_id', 'day', 'model', 'key_id', 'endpoint'])
    .execute();
  await db.schema.createIndex('usage_daily_day').on('usage_daily').columns(['day']).execute();
  await db.schema.createIndex('usage_daily_user').on('usage_daily').columns(['user_id', 'day']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_daily').execute();
  await db.schema.dropTable('request_log').execute();
}
