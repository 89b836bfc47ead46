import type SqliteDatabase from 'better-sqlite3';
import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { AccountRef } from '../features/accounts/accounts.ts';
import type { AppendResult, BalanceMove, InsertedEntry, LeaseUse, LedgerEntry, LedgerPosition, LedgerRepository, LedgerWatcher, UnwrittenEntry } from '../features/billing/ledger.ts';
import { utcDayStart } from '../features/keys/spend-periods.ts';
import type { Money } from '../lib/money.ts';
import { moneyText, moneyTextOrNull } from './money-sql.ts';
import type { Database } from './schema.ts';
import { oneByOneOnRewrite, ROWS_PER_INSERT, SqliteBatchInsert } from './sqlite-batch-insert.ts';

/**
 * Entries per statement on PostgreSQL, per slice on SQLite (a multiple of ROWS_PER_INSERT: only a batch's last slice ends in
 * a statement of fewer rows).
 */
const INSERT_CHUNK = 16 * ROWS_PER_INSERT;
/** Ids a query when a reservation asks which of a node's unacknowledged entries are written (under SQLite's 999 variables). */
const WRITTEN_CHUNK = 500;

/** A ledger row as the insert returns it (only rows actually inserted). */
interface InsertedRow {
  type: AccountRef['type'];
  id: string;
  amount: string;
  kind: LedgerEntry['kind'];
  key: string | null;
  /** created_at: a number on SQLite, text (bigint) on PostgreSQL. */
  at: number | string;
}
const tableOf = (account: AccountRef): 'users' | 'orgs' => (account.type === 'user' ? 'users' : 'orgs');

const LEDGER_COLUMNS = 'id, account_type, account_id, amount_nano, kind, request_id, model, description, created_at, key_id';
const LEDGER_COLUMN_NAMES = LEDGER_COLUMNS.split(',').map((column) => column.trim());
/** Text columns whose value mostly repeats between a batch's entries (SqliteBatchInsert's `repeated`): the same accounts, keys and models. */
const LEDGER_REPEATED_AT = ['account_type', 'account_id', 'kind', 'model', 'description', 'key_id'].map((column) => LEDGER_COLUMN_NAMES.indexOf(column));
/** Appends an entry's values in LEDGER_COLUMNS' order. */
function pushLedgerValues(values: unknown[], entry: LedgerEntry): void {
  values.push(entry.id, entry.account.type, entry.account.id, entry.amount, entry.kind, entry.requestId, entry.model, entry.description, entry.createdAt, entry.keyId ?? null);
}

/** A key's spend of one UTC day moved by a batch's entries (migration 0030): the row made, or added to. */
const KEY_SPEND_UPSERT =
  'insert into key_spend_daily (key_id, day, spent_nano) values (?, ?, ?) on conflict (key_id, day) do update set spent_nano = key_spend_daily.spent_nano + excluded.spent_nano';

/** What a balance update returns: the new balance and the account's alert and recharge thresholds, as decimal text. */
interface MovedBalance {
  balance: string;
  alert: string | null;
  recharge: string | null;
}

/**
 * A ledger batch's updates on SQLite — each account's balance, and the process's reservation it spends — prepared once,
 * as the insert is. Built through Kysely on every batch they cost a third of the batch's time on the event loop (~0.25 of
 * 0.8 ms for ~100 entries at concurrency 1), and a batch's time is a pause for every call waiting on that event loop. They
 * run on the one connection inside the batch's Kysely transaction, as the insert does. The SQL is the query builder's.
 */
class SqliteLedgerUpdates {
  private readonly balances: Record<'users' | 'orgs', SqliteDatabase.Statement>;
  private readonly lease: SqliteDatabase.Statement;
  private readonly keySpend: SqliteDatabase.Statement;

  constructor(sqlite: SqliteDatabase.Database) {
    const balance = (table: 'users' | 'orgs'): SqliteDatabase.Statement =>
      sqlite.prepare(
        `update ${table} set balance_nano = balance_nano + ? where id = ? ` +
          'returning cast(balance_nano as text) as balance, cast(low_balance_alert_nano as text) as alert, cast(auto_recharge_below_nano as text) as recharge',
      );
    this.balances = { users: balance('users'), orgs: balance('orgs') };
    this.lease = sqlite.prepare(
      'update balance_leases set amount_nano = max(amount_nano + ?, 0), expires_at = ? where account_type = ? and account_id = ? and node = ? ' +
        'returning cast(amount_nano as text) as amount',
    );
    this.keySpend = sqlite.prepare(KEY_SPEND_UPSERT);
  }

  /** Adds `spent` to what the key spent on `day` (key_spend_daily). */
  addKeySpend(keyId: string, day: number, spent: Money): void {
    this.keySpend.run(keyId, day, spent);
  }

  /** Adds `delta` to the account's balance; undefined for an unknown account. */
  moveBalance(account: AccountRef, delta: Money): MovedBalance | undefined {
    return this.balances[tableOf(account)].get(delta, account.id) as MovedBalance | undefined;
  }

  /** Takes `spent` (negative) from this process's reservation, never below 0; undefined when it holds none. */
  spendLease(account: AccountRef, spent: Money, lease: LeaseUse): { amount: string } | undefined {
    return this.lease.get(spent, lease.expiresAt, account.type, account.id, lease.node) as { amount: string } | undefined;
  }
}

export class SqlLedgerRepository implements LedgerRepository {
  private readonly postgres: boolean;
  private readonly watchers: LedgerWatcher[] = [];
  /** SQLite only: the entry insert, prepared once (see insertRows). */
  private readonly insertEntry: SqliteBatchInsert<LedgerEntry> | undefined;
  /** SQLite only: a batch's balance and lease updates, prepared once (see SqliteLedgerUpdates). */
  private readonly updates: SqliteLedgerUpdates | undefined;

  /** `sqlite`: the handle under `db` when it is SQLite (Storage.sqlite); without it entries go through Kysely. */
  constructor(
    private readonly db: Kysely<Database>,
    sqlite?: SqliteDatabase.Database,
  ) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
    this.insertEntry =
      !this.postgres && sqlite
        ? new SqliteBatchInsert(
            sqlite,
            // `where true`: SQLite's grammar needs it between a SELECT's FROM and ON CONFLICT.
            (source, valueOf) => `insert into ledger (${LEDGER_COLUMNS}) select ${LEDGER_COLUMN_NAMES.map((_, position) => valueOf(position)).join(', ')} from ${source} where true on conflict (id) do nothing`,
            LEDGER_COLUMN_NAMES.length,
            pushLedgerValues,
            LEDGER_REPEATED_AT,
          )
        : undefined;
    this.updates = !this.postgres && sqlite ? new SqliteLedgerUpdates(sqlite) : undefined;
  }

  /** Alerts (mail, DESIGN §15) told of each write in its transaction: moved balances with a threshold, inserted entries. */
  watch(watcher: LedgerWatcher): void {
    this.watchers.push(watcher);
  }

  /**
   * A batch of entries as ONE statement with ONE parameter (the rows as JSON): building a many-row insert through the
   * query builder cost more CPU than the rest of the ledger write at high request rates. An entry whose id is already in the
   * ledger is skipped (a batch retried after its commit was not acknowledged must not count twice); the rows actually
   * inserted come back, and only they move balances. On SQLite, in this process, there is no round trip to save: statements
   * prepared once (SqliteBatchInsert, 32 entries a statement) run inside the caller's Kysely transaction (which holds the one
   * connection), for less CPU still.
   */
  private async insertRows(trx: Transaction<Database>, entries: readonly LedgerEntry[], chunked: boolean): Promise<InsertedRow[]> {
    if (this.insertEntry) {
      const inserted: InsertedRow[] = [];
      const add = (entry: LedgerEntry): void => {
        inserted.push({ type: entry.account.type, id: entry.account.id, amount: entry.amount.toString(), kind: entry.kind, key: entry.keyId ?? null, at: entry.createdAt });
      };
      this.insertEntry.insertAll(entries, add, chunked);
      return inserted;
    }
    const rows = JSON.stringify(
      entries.map((entry) => {
        const values: unknown[] = [];
        pushLedgerValues(values, entry);
        return values.map((value) => (typeof value === 'bigint' ? value.toString() : value));
      }),
    );
    const columns = sql`(${sql.raw(LEDGER_COLUMNS)})`;
    const returning = sql`on conflict (id) do nothing returning account_type as type, account_id as id, cast(amount_nano as text) as amount, kind, key_id as key, created_at as at`;
    const result = this.postgres
      ? await sql<InsertedRow>`insert into ledger ${columns}
        select r->>0, r->>1, r->>2, (r->>3)::bigint, r->>4, r->>5, r->>6, r->>7, (r->>8)::bigint, r->>9
        from json_array_elements(${rows}::json) as r ${returning}`.execute(trx)
      : await sql<InsertedRow>`insert into ledger ${columns}
        select value->>0, value->>1, value->>2, cast(value->>3 as integer), value->>4, value->>5, value->>6, value->>7, value->>8, value->>9
        from json_each(${rows}) where true ${returning}`.execute(trx);
    return result.rows;
  }

  async append(entries: readonly LedgerEntry[], transaction?: Transaction<Database>, lease?: LeaseUse): Promise<AppendResult> {
    // In the caller's transaction the entries go row by row: a chunk's rewrite would have to roll back the caller's work.
    const write = async (trx: Transaction<Database>, chunked: boolean): Promise<AppendResult> => {
      const deltas = new Map<string, { account: AccountRef; delta: Money; spent: Money }>();
      const keySpends = new Map<string, { keyId: string; day: number; spent: Money }>();
      const inserted: InsertedEntry[] = [];
      for (let start = 0; start < entries.length; start += INSERT_CHUNK) {
        for (const row of await this.insertRows(trx, entries.slice(start, start + INSERT_CHUNK), chunked)) {
          const key = `${row.type}:${row.id}`;
          const amount = BigInt(row.amount);
          if (this.watchers.length > 0) inserted.push({ account: { type: row.type, id: row.id }, amount, kind: row.kind, keyId: row.key, createdAt: Number(row.at) });
          if (row.key !== null && (row.kind === 'charge' || row.kind === 'refund')) {
            // Only entries inserted now count: one already written (a batch written again) was counted by its first write.
            const day = utcDayStart(Number(row.at));
            const dayKey = `${row.key} ${day}`;
            const spend = keySpends.get(dayKey);
            if (spend) spend.spent -= amount;
            else keySpends.set(dayKey, { keyId: row.key, day, spent: -amount });
          }
          const spent = amount < 0n ? amount : 0n;
          const current = deltas.get(key);
          if (current) {
            current.delta += amount;
            current.spent += spent;
          } else {
            deltas.set(key, { account: { type: row.type, id: row.id }, delta: amount, spent });
          }
        }
      }
      const balances = new Map<string, Money>();
      const reserved = new Map<string, Money>();
      const watched: BalanceMove[] = [];
      // A fixed order of updates keeps two processes' batches from deadlocking on PostgreSQL.
      for (const [key, { account, delta, spent }] of [...deltas].sort(([a], [b]) => a.localeCompare(b))) {
        const row = this.updates
          ? this.updates.moveBalance(account, delta)
          : await trx
              .updateTable(tableOf(account))
              .set({ balance_nano: sql`balance_nano + ${delta}` })
              .where('id', '=', account.id)
              .returning([moneyText('balance_nano').as('balance'), moneyTextOrNull('low_balance_alert_nano').as('alert'), moneyTextOrNull('auto_recharge_below_nano').as('recharge')])
              .executeTakeFirst();
        if (!row) throw new Error(`ledger entry for unknown account ${key}`);
        balances.set(key, BigInt(row.balance));
        if (row.alert !== null || row.recharge !== null) {
          const after = BigInt(row.balance);
          watched.push({ account, before: after - delta, after, lowBalanceAlert: row.alert === null ? null : BigInt(row.alert), autoRechargeBelow: row.recharge === null ? null : BigInt(row.recharge) });
        }
        if (lease && spent < 0n) {
          const left = this.updates
            ? this.updates.spendLease(account, spent, lease)
            : await trx
                .updateTable('balance_leases')
                .set({ amount_nano: sql`${sql.raw(this.postgres ? 'greatest' : 'max')}(amount_nano + ${spent}, 0)`, expires_at: lease.expiresAt })
                .where('account_type', '=', account.type)
                .where('account_id', '=', account.id)
                .where('node', '=', lease.node)
                .returning(moneyText('amount_nano').as('amount'))
                .executeTakeFirst();
          if (left) reserved.set(key, BigInt(left.amount));
        }
      }
      // After the balances, in a fixed order too (PostgreSQL: row locks taken in one order by every process); before the
      // watchers, whose key-limit alert reads the key's spend with this batch in it.
      for (const [, { keyId, day, spent }] of [...keySpends].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        if (spent === 0n) continue;
        if (this.updates) this.updates.addKeySpend(keyId, day, spent);
        else
          await trx
            .insertInto('key_spend_daily')
            .values({ key_id: keyId, day, spent_nano: spent })
            .onConflict((conflict) => conflict.columns(['key_id', 'day']).doUpdateSet({ spent_nano: sql`key_spend_daily.spent_nano + excluded.spent_nano` }))
            .execute();
      }
      for (const watcher of this.watchers) await watcher({ moves: watched, inserted }, trx);
      return { balances, reserved };
    };
    return transaction ? write(transaction, false) : oneByOneOnRewrite((chunked) => this.db.transaction().execute((trx) => write(trx, chunked)));
  }

  async reserve(
    account: AccountRef,
    lease: LeaseUse,
    decide: (balance: Money, reservedByOthers: Money, unwritten: Money) => Money,
    now: number,
    unacknowledged: () => readonly UnwrittenEntry[] = () => [],
  ): Promise<{ balance: Money; reserved: Money } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // The account row is locked first, as the ledger write does, so reservations and writes on one account take turns.
      let query = trx.selectFrom(tableOf(account)).select(moneyText('balance_nano').as('balance')).where('id', '=', account.id);
      if (this.postgres) query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (!row) return undefined;
      const others = await trx
        .selectFrom('balance_leases')
        .select(sql<string | null>`cast(sum(amount_nano) as text)`.as('total'))
        .where('account_type', '=', account.type)
        .where('account_id', '=', account.id)
        .where('node', '<>', lease.node)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      const recorded = unacknowledged();
      let unwritten = 0n;
      for (const entry of recorded) unwritten += entry.amount;
      const balance = BigInt(row.balance);
      const reserved = decide(balance, BigInt(others?.total ?? '0'), unwritten - (await this.writtenSum(trx, recorded)));
      await trx
        .insertInto('balance_leases')
        .values({ account_type: account.type, account_id: account.id, node: lease.node, amount_nano: reserved, expires_at: lease.expiresAt })
        .onConflict((conflict) => conflict.columns(['account_type', 'account_id', 'node']).doUpdateSet({ amount_nano: reserved, expires_at: lease.expiresAt }))
        .execute();
      return { balance, reserved };
    });
  }

  /** The sum of those of `entries` the ledger holds (committed: with the account locked, a batch still writing has not moved it). */
  private async writtenSum(trx: Transaction<Database>, entries: readonly UnwrittenEntry[]): Promise<Money> {
    let written = 0n;
    for (let start = 0; start < entries.length; start += WRITTEN_CHUNK) {
      const ids = entries.slice(start, start + WRITTEN_CHUNK).map((entry) => entry.id);
      const row = await trx.selectFrom('ledger').select(sql<string | null>`cast(sum(amount_nano) as text)`.as('total')).where('id', 'in', ids).executeTakeFirst();
      written += BigInt(row?.total ?? '0');
    }
    return written;
  }

  async release(node: string): Promise<void> {
    await this.db.deleteFrom('balance_leases').where('node', '=', node).execute();
  }

  async balance(account: AccountRef): Promise<Money | undefined> {
    const row = await this.db
      .selectFrom(tableOf(account))
      .select(moneyText('balance_nano').as('balance'))
      .where('id', '=', account.id)
      .executeTakeFirst();
    return row ? BigInt(row.balance) : undefined;
  }

  async entries(account: AccountRef, limit: number): Promise<LedgerEntry[]> {
    return this.page(account, limit);
  }

  async page(account: AccountRef, limit: number, before?: LedgerPosition): Promise<LedgerEntry[]> {
    let query = this.db
      .selectFrom('ledger')
      .select(['id', 'kind', 'request_id', 'key_id', 'model', 'description', 'created_at', moneyText('amount_nano').as('amount')])
      .where('account_type', '=', account.type)
      .where('account_id', '=', account.id);
    if (before) {
      // As in sumThrough: the bound on created_at alone lets the index start at the cursor.
      query = query.where('created_at', '<=', before.createdAt).where((where) => where.or([where('created_at', '<', before.createdAt), where('id', '<', before.id)]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id,
      account,
      amount: BigInt(row.amount),
      kind: row.kind,
      requestId: row.request_id,
      keyId: row.key_id,
      model: row.model,
      description: row.description,
      createdAt: row.created_at,
    }));
  }

  /**
   * The balance less the entries after `position`, in one statement (one snapshot): balance = Σ ledger, so it is the Σ of
   * the entries through it, read from the newest end. The ledger's newest page then reads a handful of entries, not every
   * entry the account ever had (bench:ledger, an account of 1,000,000 entries: the newest page 135 → 3 ms on SQLite, where
   * the event loop waited for it, and 146 → 6 ms on PostgreSQL); a page far back reads what lies between it and now.
   */
  async sumThrough(account: AccountRef, position: LedgerPosition): Promise<Money> {
    const after = this.db
      .selectFrom('ledger')
      .select(sql<string>`coalesce(sum(amount_nano), 0)`.as('after'))
      .where('account_type', '=', account.type)
      .where('account_id', '=', account.id)
      // `created_at >= t and (created_at > t or id > i)`, not `created_at > t or (…)`: an OR at the top keeps SQLite from
      // reading the index from `t` on, and it reads the account's every entry instead (24 ms for 200,000).
      .where('created_at', '>=', position.createdAt)
      .where((where) => where.or([where('created_at', '>', position.createdAt), where('id', '>', position.id)]));
    const row = await this.db
      .selectFrom(tableOf(account))
      .select(sql<string>`cast(balance_nano - (${after}) as text)`.as('total'))
      .where('id', '=', account.id)
      .executeTakeFirst();
    return BigInt(row?.total ?? '0');
  }

  async sum(account: AccountRef): Promise<Money> {
    const row = await this.db
      .selectFrom('ledger')
      .select(sql<string | null>`cast(sum(amount_nano) as text)`.as('total'))
      .where('account_type', '=', account.type)
      .where('account_id', '=', account.id)
      .executeTakeFirst();
    return BigInt(row?.total ?? '0');
  }
}
