import type SqliteDatabase from 'better-sqlite3';
import { PostgresAdapter, sql, type Kysely, type SelectQueryBuilder, type Selectable, type Transaction } from 'kysely';
import type { AccountRef } from '../features/accounts/accounts.ts';
import { dayOf, type CostAdjustment, type LogScope, type RequestLogRepository, type RequestLogRow, type RequestsQuery, type UsageQuery, type UsageRow } from '../features/usage/request-log.ts';
import { moneyText } from './money-sql.ts';
import type { Database, UsageAdjustmentsTable, UsageDailyTable } from './schema.ts';
import { oneByOneOnRewrite, SqliteBatchInsert } from './sqlite-batch-insert.ts';

const INSERT_CHUNK = 500;
const DAY_MS = 86_400_000;
/** Partitions are kept ready for yesterday (clock skew between nodes) and the next days. */
const PARTITIONS_AHEAD_DAYS = 3;

type Rollup = Omit<UsageDailyTable, 'cost_nano'> & { cost_nano: bigint };
const ROLLUP_KEY = ['account_type', 'account_id', 'day', 'model', 'key_id', 'endpoint'] as const;
const COUNTERS = ['requests', 'errors', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost_nano'] as const;
const ROLLUP_COLUMNS = [...ROLLUP_KEY, 'user_id', ...COUNTERS] as const;

const LOG_COLUMN_LIST = `id, created_at, account_type, account_id, key_id, user_id, org_id, endpoint, model, served_model, provider, channel, attempts,
  stream, status, error_type, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_nano, latency_ms, ttft_ms, task_id`;
const LOG_COLUMNS = sql`(${sql.raw(LOG_COLUMN_LIST)})`;
const LOG_COLUMN_NAMES = LOG_COLUMN_LIST.split(',').map((column) => column.trim());

/** Where values sit in a tuple. */
const COST_AT = LOG_COLUMN_NAMES.indexOf('cost_nano');
const ACCOUNT_TYPE_AT = LOG_COLUMN_NAMES.indexOf('account_type');
const ACCOUNT_ID_AT = LOG_COLUMN_NAMES.indexOf('account_id');
const SERVED_MODEL_AT = LOG_COLUMN_NAMES.indexOf('served_model');

/** The tuple as JSON takes it: the cost as decimal text (JSON has no bigint). */
function jsonTuple(row: RequestLogRow): unknown[] {
  const tuple: unknown[] = [];
  pushTuple(tuple, row);
  tuple[COST_AT] = row.cost.toString();
  return tuple;
}

/**
 * The SQLite batch's statements, prepared once. On SQLite the batch is written with them instead of one JSON statement
 * through Kysely: the JSON statement cost 44 µs of CPU per row at the bench's batch size against 15 µs row by row, and
 * the multi-row inserts of SqliteBatchInsert less again.
 */
class SqliteStatements {
  readonly rows: SqliteBatchInsert<RequestLogRow>;
  readonly upsertRollup: SqliteDatabase.Statement;

  constructor(sqlite: SqliteDatabase.Database) {
    this.rows = new SqliteBatchInsert(
      sqlite,
      // `where true`: SQLite's grammar needs it between a SELECT's FROM and ON CONFLICT.
      (source, valueOf) => `insert into request_log (${LOG_COLUMN_LIST}) select ${sqliteSelectList(valueOf)} from ${source} where true on conflict (created_at, id) do nothing`,
      LOG_COLUMN_NAMES.length,
      pushSqliteTuple,
      REPEATED_AT,
    );
    const counters = COUNTERS.map((column) => `${column} = usage_daily.${column} + excluded.${column}`).join(', ');
    this.upsertRollup = sqlite.prepare(
      `insert into usage_daily (${ROLLUP_COLUMNS.join(', ')}) values (${ROLLUP_COLUMNS.map(() => '?').join(', ')}) on conflict (${ROLLUP_KEY.join(', ')}) do update set ${counters}`,
    );
  }
}

/**
 * A row as SQLite's batch binds it: pushTuple's values, but three strings that mostly repeat another value go as numbers,
 * which bind for a tenth of a string's instructions (a string is measured, copied to UTF-8 and copied again by SQLite):
 * account_type as 1 (org) or 0 (user); account_id as null when it is the row's own user (a user's account), which
 * `coalesce` takes from user_id (account_id is never null); served_model as 0 when it is the model asked for, which the
 * select list takes from model (a real served_model is text or null, never 0). bench:instructions: ~2.4k a chat call.
 * The strings that repeat from row to row (REPEATED_AT) go once a chunk (SqliteBatchInsert's `repeated`).
 */
function sqliteSelectList(valueOf: (position: number) => string): string {
  const at = (column: string): number => LOG_COLUMN_NAMES.indexOf(column);
  const list = LOG_COLUMN_NAMES.map((_, position) => valueOf(position));
  list[ACCOUNT_TYPE_AT] = `iif(${valueOf(ACCOUNT_TYPE_AT)}, 'org', 'user')`;
  list[ACCOUNT_ID_AT] = `coalesce(${valueOf(ACCOUNT_ID_AT)}, ${valueOf(at('user_id'))})`;
  list[SERVED_MODEL_AT] = `iif(${valueOf(SERVED_MODEL_AT)} is 0, ${valueOf(at('model'))}, ${valueOf(SERVED_MODEL_AT)})`;
  return list.join(', ');
}

/** Text columns whose value mostly repeats between the rows of a batch: the same keys, models and routes, call after call. */
const REPEATED_AT = ['account_id', 'key_id', 'user_id', 'org_id', 'endpoint', 'model', 'provider', 'channel'].map((column) => LOG_COLUMN_NAMES.indexOf(column));

/** Appends a row's values for sqliteSelectList: pushTuple's, with the three encoded. */
function pushSqliteTuple(values: unknown[], row: RequestLogRow): void {
  const at = values.length;
  pushTuple(values, row);
  values[at + ACCOUNT_TYPE_AT] = row.account.type === 'org' ? 1 : 0;
  if (row.account.type === 'user' && row.account.id === row.userId) values[at + ACCOUNT_ID_AT] = null;
  if (row.servedModel !== null && row.servedModel === row.model) values[at + SERVED_MODEL_AT] = 0;
}

/** Appends a row's values in LOG_COLUMNS' order; the cost stays a bigint (SQLite binds it as a 64-bit integer, no text made). */
function pushTuple(values: unknown[], row: RequestLogRow): void {
  values.push(
    row.id, row.created, row.account.type, row.account.id, row.keyId, row.userId, row.orgId, row.endpoint, row.model, row.servedModel, row.provider,
    row.channel, row.attempts, row.stream ? 1 : 0, row.status, row.errorType, row.inputTokens, row.outputTokens, row.cacheReadTokens,
    row.cacheWriteTokens, row.cost, row.latencyMs, row.ttftMs, row.taskId,
  );
}

/** The request log and its rollups on SQLite and PostgreSQL (migration 0016). */
export class SqlRequestLogRepository implements RequestLogRepository {
  private readonly postgres: boolean;
  private readonly statements: SqliteStatements | undefined;

  /** `sqlite`: the handle under `db` when it is SQLite (Storage.sqlite); without it the batch goes through Kysely. */
  constructor(
    private readonly db: Kysely<Database>,
    sqlite?: SqliteDatabase.Database,
  ) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    this.statements = !this.postgres && sqlite ? new SqliteStatements(sqlite) : undefined;
  }

  /**
   * A chunk of rows as ONE statement with ONE parameter (the rows as JSON), as the ledger writes: a row already in the
   * log is skipped, and the ids actually inserted come back, so only they move the rollups.
   */
  private async insertRows(trx: Transaction<Database>, rows: readonly RequestLogRow[]): Promise<Set<string>> {
    const json = JSON.stringify(rows.map(jsonTuple));
    const result = this.postgres
      ? await sql<{ id: string }>`insert into request_log ${LOG_COLUMNS}
        select r->>0, (r->>1)::bigint, r->>2, r->>3, r->>4, r->>5, r->>6, r->>7, r->>8, r->>9, r->>10, r->>11, (r->>12)::int, (r->>13)::int,
          (r->>14)::int, r->>15, (r->>16)::bigint, (r->>17)::bigint, (r->>18)::bigint, (r->>19)::bigint, (r->>20)::bigint, (r->>21)::int,
          (r->>22)::int, r->>23
        from json_array_elements(${json}::json) as r on conflict (created_at, id) do nothing returning id`.execute(trx)
      : await sql<{ id: string }>`insert into request_log ${LOG_COLUMNS}
        select value->>0, value->>1, value->>2, value->>3, value->>4, value->>5, value->>6, value->>7, value->>8, value->>9, value->>10,
          value->>11, value->>12, value->>13, value->>14, value->>15, value->>16, value->>17, value->>18, value->>19,
          cast(value->>20 as integer), value->>21, value->>22, value->>23
        from json_each(${json}) where true on conflict (created_at, id) do nothing returning id`.execute(trx);
    return new Set(result.rows.map((row) => row.id));
  }

  async append(rows: readonly RequestLogRow[]): Promise<void> {
    await oneByOneOnRewrite((chunked) => this.appendOnce(rows, chunked));
  }

  /** One transaction: the rows not yet written and the rollups they move. `chunked`: SQLite's multi-row inserts. */
  private async appendOnce(rows: readonly RequestLogRow[], chunked: boolean): Promise<void> {
    const statements = this.statements;
    // The Kysely transaction holds SQLite's one connection, so the prepared statements below run inside it, alone.
    await this.db.transaction().execute(async (trx) => {
      const rollups = new Map<string, Rollup>();
      const created = new Map<string, RequestLogRow>();
      const counted = (row: RequestLogRow): void => {
        addRow(rollups, row);
        if (row.taskId !== null) created.set(row.taskId, row);
      };
      if (statements) statements.rows.insertAll(rows, counted, chunked);
      else {
        for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
          const chunk = rows.slice(start, start + INSERT_CHUNK);
          const inserted = await this.insertRows(trx, chunk);
          for (const row of chunk) if (inserted.has(row.id)) counted(row);
        }
      }
      // Refunds that came before their request's row (only rows inserted now: a retried batch finds none to apply again).
      for (const pending of await claimWaiting(trx, this.postgres, [...created.keys()])) {
        merge(rollups, { ...rollupOf(created.get(pending.task_id)!), cost_nano: BigInt(pending.cost_nano) });
      }
      if (statements) {
        for (const rollup of sortedRollups([...rollups.values()])) statements.upsertRollup.run(ROLLUP_COLUMNS.map((column) => rollup[column]));
      } else await upsertRollups(trx, [...rollups.values()]);
    }).finally(forgetLastRollup);
  }

  async requests(query: RequestsQuery): Promise<RequestLogRow[]> {
    let select = this.db.selectFrom('request_log').selectAll().select(moneyText('cost_nano').as('cost'));
    // Scoped so that one of the log's two indexes (migration 0029) gives the rows newest first: a user's account and a user
    // through request_log_by_user, an org through request_log_by_org — its condition named literally, as SQLite uses a
    // partial index only when the query's own terms imply it. A key alone is looked for under its owner.
    const account = query.account;
    const owner = account || query.userId !== undefined ? undefined : await this.ownerOf(query.keyId);
    // Keys and bots are never deleted (a user with either cannot be): an id that is neither has no rows.
    if (owner === null) return [];
    const userId = query.userId ?? (account?.type === 'user' ? account.id : owner);
    if (account) {
      select = select.where(account.type === 'org' ? sql<boolean>`account_type = 'org'` : sql<boolean>`account_type = 'user'`).where('account_id', '=', account.id);
    }
    if (userId !== undefined) select = select.where('user_id', '=', userId);
    if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
    if (query.model !== undefined) select = select.where('model', '=', query.model);
    if (query.status !== undefined) select = select.where('status', '=', query.status);
    if (query.from !== undefined) select = select.where('created_at', '>=', query.from);
    if (query.to !== undefined) select = select.where('created_at', '<=', query.to);
    const before = query.before;
    if (before) {
      select = select.where((where) =>
        where.or([where('created_at', '<', before.created), where.and([where('created_at', '=', before.created), where('id', '<', before.id)])]),
      );
    }
    const rows = await select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map((row) => ({
      id: row.id,
      created: Number(row.created_at),
      account: { type: row.account_type, id: row.account_id },
      keyId: row.key_id,
      userId: row.user_id,
      orgId: row.org_id,
      endpoint: row.endpoint,
      model: row.model,
      servedModel: row.served_model,
      provider: row.provider,
      channel: row.channel,
      attempts: row.attempts,
      stream: row.stream === 1,
      status: row.status,
      errorType: row.error_type,
      inputTokens: Number(row.input_tokens),
      outputTokens: Number(row.output_tokens),
      cacheReadTokens: Number(row.cache_read_tokens),
      cacheWriteTokens: Number(row.cache_write_tokens),
      cost: BigInt(row.cost),
      latencyMs: row.latency_ms,
      ttftMs: row.ttft_ms,
      taskId: row.task_id,
    }));
  }

  /** The user a key (or a bot, whose rows carry its id as the key) belongs to; null for an id that is neither. */
  private async ownerOf(keyId: string | undefined): Promise<string | null | undefined> {
    if (keyId === undefined) return undefined;
    const key = await this.db.selectFrom('api_keys').select('user_id').where('id', '=', keyId).executeTakeFirst();
    return (key ?? (await this.db.selectFrom('bots').select('user_id').where('id', '=', keyId).executeTakeFirst()))?.user_id ?? null;
  }

  async usage(query: UsageQuery): Promise<UsageRow[]> {
    const dimensions = { day: 'day', model: 'model', key: 'key_id', endpoint: 'endpoint' } as const;
    const groups = query.groupBy.map((dimension) => dimensions[dimension]);
    const total = (column: string) => sql<number>`cast(sum(${sql.ref(column)}) as bigint)`;
    let select = scoped(this.db.selectFrom('usage_daily'), query)
      .where('day', '>=', query.from)
      .where('day', '<=', query.to)
      .select([
        total('requests').as('requests'),
        total('errors').as('errors'),
        total('input_tokens').as('input_tokens'),
        total('output_tokens').as('output_tokens'),
        total('cache_read_tokens').as('cache_read_tokens'),
        total('cache_write_tokens').as('cache_write_tokens'),
        sql<string | null>`cast(sum(cost_nano) as text)`.as('cost'),
      ]);
    for (const column of groups) select = select.select(column).groupBy(column).orderBy(column);
    const rows = (await select.execute()) as Array<Record<string, unknown> & { cost: string | null }>;
    return rows
      .filter((row) => row.cost !== null)
      .map((row) => ({
        ...(groups.includes('day') ? { day: String(row.day) } : {}),
        ...(groups.includes('model') ? { model: row.model === '' ? null : String(row.model) } : {}),
        ...(groups.includes('key_id') ? { keyId: String(row.key_id) } : {}),
        ...(groups.includes('endpoint') ? { endpoint: String(row.endpoint) } : {}),
        requests: Number(row.requests),
        errors: Number(row.errors),
        inputTokens: Number(row.input_tokens),
        outputTokens: Number(row.output_tokens),
        cacheReadTokens: Number(row.cache_read_tokens),
        cacheWriteTokens: Number(row.cache_write_tokens),
        cost: BigInt(row.cost ?? '0'),
      }));
  }

  async maintain(now: number, cutoff: number): Promise<void> {
    // Adjustments that waited longer than rows are kept: their request's row was lost (kill -9 before its batch was written).
    // The rollups lack that row's charge, so they must lack its refund too: dropped, not applied.
    await this.db.deleteFrom('usage_adjustments').where('created_at', '<', cutoff).execute();
    if (!this.postgres) {
      await this.db.deleteFrom('request_log').where('created_at', '<', cutoff).execute();
      return;
    }
    const today = Math.floor(now / DAY_MS) * DAY_MS;
    for (let day = today - DAY_MS; day <= today + PARTITIONS_AHEAD_DAYS * DAY_MS; day += DAY_MS) await this.createPartition(day);
    const partitions = await sql<{ name: string }>`select tablename as name from pg_tables where schemaname = current_schema() and tablename like 'request_log_p%'`.execute(this.db);
    for (const { name } of partitions.rows) {
      const start = partitionStart(name);
      if (start !== undefined && start + DAY_MS <= cutoff) await sql`drop table if exists ${sql.table(name)}`.execute(this.db);
    }
    await sql`delete from request_log_default where created_at < ${cutoff}`.execute(this.db);
  }

  /** The day's partition; a default partition already holding rows of that day refuses it, and the rows stay there. */
  private async createPartition(start: number): Promise<void> {
    const name = `request_log_p${dayOf(start).replaceAll('-', '')}`;
    try {
      await sql`create table if not exists ${sql.table(name)} partition of request_log for values from (${sql.lit(start)}) to (${sql.lit(start + DAY_MS)})`.execute(this.db);
    } catch (error) {
      if (!/default partition|would be violated/i.test(error instanceof Error ? error.message : '')) throw error;
    }
  }
}

async function upsertRollups(trx: Transaction<Database>, rollups: Rollup[]): Promise<void> {
  if (rollups.length === 0) return;
  sortedRollups(rollups);
  const add = (column: (typeof COUNTERS)[number]) => sql<never>`usage_daily.${sql.ref(column)} + excluded.${sql.ref(column)}`;
  await trx
    .insertInto('usage_daily')
    .values(rollups)
    .onConflict((conflict) =>
      conflict.columns([...ROLLUP_KEY]).doUpdateSet({
        requests: add('requests'),
        errors: add('errors'),
        input_tokens: add('input_tokens'),
        output_tokens: add('output_tokens'),
        cache_read_tokens: add('cache_read_tokens'),
        cache_write_tokens: add('cache_write_tokens'),
        cost_nano: add('cost_nano'),
      }),
    )
    .execute();
}

const partitionStart = (name: string): number | undefined => {
  const match = /^request_log_p(\d{4})(\d{2})(\d{2})$/.exec(name);
  return match ? Date.parse(`${match[1]}-${match[2]}-${match[3]}T00:00:00Z`) : undefined;
};

/** The rollups' scope (their primary key starts with the account; usage_daily_user serves a user). */
function scoped<Output>(
  select: SelectQueryBuilder<Database, 'usage_daily', Output>,
  scope: LogScope,
): SelectQueryBuilder<Database, 'usage_daily', Output> {
  let scopedSelect = select;
  const account: AccountRef | undefined = scope.account;
  if (account) {
    scopedSelect = scopedSelect.where(sql.ref('account_type'), '=', account.type).where(sql.ref('account_id'), '=', account.id);
  }
  if (scope.userId !== undefined) scopedSelect = scopedSelect.where(sql.ref('user_id'), '=', scope.userId);
  return scopedSelect;
}

const emptyRollup = (): Rollup => ({
  account_type: 'user',
  account_id: '',
  day: '',
  model: '',
  key_id: '',
  endpoint: '',
  user_id: '',
  requests: 0,
  errors: 0,
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  cache_write_tokens: 0,
  cost_nano: 0n,
});

/** One order on every node, so two batches touching the same rollups cannot deadlock on PostgreSQL. */
function sortedRollups(rollups: Rollup[]): Rollup[] {
  return rollups.sort((a, b) => keyOf(a).localeCompare(keyOf(b)));
}

const keyOf = (rollup: Pick<Rollup, (typeof ROLLUP_KEY)[number]>): string => ROLLUP_KEY.map((column) => rollup[column]).join('\u0000');

function merge(rollups: Map<string, Rollup>, delta: Rollup): void {
  const key = keyOf(delta);
  const current = rollups.get(key);
  if (!current) {
    rollups.set(key, delta);
    return;
  }
  current.requests += delta.requests;
  current.errors += delta.errors;
  current.input_tokens += delta.input_tokens;
  current.output_tokens += delta.output_tokens;
  current.cache_read_tokens += delta.cache_read_tokens;
  current.cache_write_tokens += delta.cache_write_tokens;
  current.cost_nano += delta.cost_nano;
}

/** The rollup a row counts in, with nothing counted yet. */
const rollupOf = (row: RequestLogRow): Rollup => ({
  ...emptyRollup(),
  account_type: row.account.type,
  account_id: row.account.id,
  day: dayOf(row.created),
  model: row.model ?? '',
  key_id: row.keyId,
  endpoint: row.endpoint,
  user_id: row.userId,
});

/** The rows of a batch share a day or two: their day's text is made once, not per row (a Date and an ISO string each). */
let cachedDayNumber = Number.NaN;
let cachedDay = '';
function dayOfRow(created: number): string {
  const dayNumber = Math.floor(created / DAY_MS);
  if (dayNumber !== cachedDayNumber) {
    cachedDay = dayOf(created);
    cachedDayNumber = dayNumber;
  }
  return cachedDay;
}

/** The rollup the last counted row went to (and in which batch's map): a batch's rows mostly repeat their neighbour's key. */
let lastRollups: Map<string, Rollup> | undefined;
let lastRow: RequestLogRow | undefined;
let lastRollup: Rollup | undefined;

/** Lets go of the last batch's map and row once the batch is written. */
function forgetLastRollup(): void {
  lastRollups = undefined;
  lastRow = undefined;
  lastRollup = undefined;
}

const sameRollup = (a: RequestLogRow, b: RequestLogRow): boolean =>
  a.keyId === b.keyId && a.model === b.model && a.endpoint === b.endpoint && a.account.id === b.account.id && a.account.type === b.account.type
  && Math.floor(a.created / DAY_MS) === Math.floor(b.created / DAY_MS);

/** Counts a written row in its rollup; a rollup object is made only for the first row of its key (keyOf's order). */
function addRow(rollups: Map<string, Rollup>, row: RequestLogRow): void {
  let rollup: Rollup | undefined;
  if (lastRollups === rollups && lastRow !== undefined && sameRollup(lastRow, row)) rollup = lastRollup!;
  else {
    const day = dayOfRow(row.created);
    const model = row.model ?? '';
    const key = `${row.account.type}\u0000${row.account.id}\u0000${day}\u0000${model}\u0000${row.keyId}\u0000${row.endpoint}`;
    rollup = rollups.get(key);
    if (!rollup) {
      rollup = { ...emptyRollup(), account_type: row.account.type, account_id: row.account.id, day, model, key_id: row.keyId, endpoint: row.endpoint, user_id: row.userId };
      rollups.set(key, rollup);
    }
    lastRollups = rollups;
    lastRollup = rollup;
  }
  lastRow = row;
  rollup.requests += 1;
  if (row.errorType !== null) rollup.errors += 1;
  rollup.input_tokens += row.inputTokens;
  rollup.output_tokens += row.outputTokens;
  rollup.cache_read_tokens += row.cacheReadTokens;
  rollup.cache_write_tokens += row.cacheWriteTokens;
  rollup.cost_nano += row.cost;
}

type Waiting = Selectable<UsageAdjustmentsTable>;

const fallbackRollup = (waiting: Waiting): Rollup => ({
  ...emptyRollup(),
  account_type: waiting.account_type,
  account_id: waiting.account_id,
  day: waiting.day,
  model: waiting.model,
  key_id: waiting.key_id,
  endpoint: waiting.endpoint,
  user_id: waiting.user_id,
  cost_nano: BigInt(waiting.cost_nano),
});

/**
 * Takes (deletes, returning them) the waiting adjustments of these tasks. On PostgreSQL the tasks' rows are locked first:
 * a refund transaction writes its task's row before it looks for the request's log row, so either it sees this
 * transaction's row, or this transaction waits for it and then sees its waiting adjustment — never neither.
 */
async function claimWaiting(trx: Transaction<Database>, postgres: boolean, taskIds: string[]): Promise<Waiting[]> {
  if (taskIds.length === 0) return [];
  taskIds.sort();
  if (postgres) await trx.selectFrom('tasks').select('id').where('id', 'in', taskIds).orderBy('id').forUpdate().execute();
  return trx
    .deleteFrom('usage_adjustments')
    .where('task_id', 'in', taskIds)
    .returning(['id', 'task_id', moneyText('cost_nano').as('cost_nano'), 'account_type', 'account_id', 'day', 'model', 'key_id', 'user_id', 'endpoint', 'created_at'])
    .execute();
}

/**
 * Moves the usage rollups by a task's refund or correction, in the caller's transaction (the one that writes the ledger
 * entry, whose id keys the adjustment, and that has already written the task's row). The request that created the task
 * counts it when its log row is written; else the adjustment waits for the row (the request-log writer applies it), or —
 * when the task is older than the log keeps rows, so its row is gone — counts on its fallback rollup at once.
 */
export async function adjustUsage(trx: Transaction<Database>, adjustment: CostAdjustment): Promise<void> {
  const row = await trx
    .selectFrom('request_log')
    .select(['account_type', 'account_id', 'created_at', 'model', 'key_id', 'endpoint', 'user_id'])
    .where('task_id', '=', adjustment.taskId)
    .limit(1)
    .executeTakeFirst();
  if (row) {
    const day = dayOf(Number(row.created_at));
    await upsertRollups(trx, [{ ...emptyRollup(), account_type: row.account_type, account_id: row.account_id, day, model: row.model ?? '', key_id: row.key_id, endpoint: row.endpoint, user_id: row.user_id, cost_nano: adjustment.cost }]);
    return;
  }
  const { fallback } = adjustment;
  const waiting: Waiting = {
    id: adjustment.id,
    task_id: adjustment.taskId,
    cost_nano: adjustment.cost.toString(),
    account_type: fallback.account.type,
    account_id: fallback.account.id,
    day: fallback.day,
    model: fallback.model,
    key_id: fallback.keyId,
    user_id: fallback.userId,
    endpoint: fallback.endpoint,
    created_at: adjustment.at,
  };
  if (adjustment.requestAt < adjustment.rowsKeptFrom) {
    await upsertRollups(trx, [fallbackRollup(waiting)]);
    return;
  }
  await trx.insertInto('usage_adjustments').values({ ...waiting, cost_nano: adjustment.cost }).execute();
}
