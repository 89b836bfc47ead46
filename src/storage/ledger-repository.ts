import { PostgresAdapter, sql, type Kysely, type Transaction } from 'kysely';
import type { AccountRef } from '../features/accounts/accounts.ts';
import { accountKey, type LedgerEntry, type LedgerRepository } from '../features/billing/ledger.ts';
import type { Money } from '../lib/money.ts';
import { moneyText } from './money-sql.ts';
import type { Database } from './schema.ts';

const INSERT_CHUNK = 500;
const tableOf = (account: AccountRef): 'users' | 'orgs' => (account.type === 'user' ? 'users' : 'orgs');

export class SqlLedgerRepository implements LedgerRepository {
  private readonly postgres: boolean;

  constructor(private readonly db: Kysely<Database>) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  /**
   * A batch of entries as ONE statement with ONE parameter (the rows as JSON): building a many-row insert through the
   * query builder cost more CPU than the rest of the ledger write at high request rates.
   */
  private async insertRows(trx: Transaction<Database>, entries: readonly LedgerEntry[]): Promise<void> {
    const rows = JSON.stringify(
      entries.map((entry) => [entry.id, entry.account.type, entry.account.id, entry.amount.toString(), entry.kind, entry.requestId, entry.model, entry.description, entry.createdAt]),
    );
    const columns = sql`(id, account_type, account_id, amount_nano, kind, request_id, model, description, created_at)`;
    if (this.postgres) {
      await sql`insert into ledger ${columns}
        select r->>0, r->>1, r->>2, (r->>3)::bigint, r->>4, r->>5, r->>6, r->>7, (r->>8)::bigint
        from json_array_elements(${rows}::json) as r`.execute(trx);
    } else {
      await sql`insert into ledger ${columns}
        select value->>0, value->>1, value->>2, cast(value->>3 as integer), value->>4, value->>5, value->>6, value->>7, value->>8
        from json_each(${rows})`.execute(trx);
    }
  }

  async append(entries: readonly LedgerEntry[], transaction?: Transaction<Database>): Promise<Map<string, Money>> {
    const deltas = new Map<string, { account: AccountRef; delta: Money }>();
    for (const entry of entries) {
      const key = accountKey(entry.account);
      const current = deltas.get(key);
      if (current) current.delta += entry.amount;
      else deltas.set(key, { account: entry.account, delta: entry.amount });
    }
    const write = async (trx: Transaction<Database>): Promise<Map<string, Money>> => {
      for (let start = 0; start < entries.length; start += INSERT_CHUNK) await this.insertRows(trx, entries.slice(start, start + INSERT_CHUNK));
      const balances = new Map<string, Money>();
      // A fixed order of updates keeps two processes' batches from deadlocking on PostgreSQL.
      for (const [key, { account, delta }] of [...deltas].sort(([a], [b]) => a.localeCompare(b))) {
        const row = await trx
          .updateTable(tableOf(account))
          .set({ balance_nano: sql`balance_nano + ${delta}` })
          .where('id', '=', account.id)
          .returning(moneyText('balance_nano').as('balance'))
          .executeTakeFirst();
        if (!row) throw new Error(`ledger entry for unknown account ${key}`);
        balances.set(key, BigInt(row.balance));
      }
      return balances;
    };
    return transaction ? write(transaction) : this.db.transaction().execute(write);
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
    const rows = await this.db
      .selectFrom('ledger')
      .select(['id', 'kind', 'request_id', 'model', 'description', 'created_at', moneyText('amount_nano').as('amount')])
      .where('account_type', '=', account.type)
      .where('account_id', '=', account.id)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      account,
      amount: BigInt(row.amount),
      kind: row.kind,
      requestId: row.request_id,
      model: row.model,
      description: row.description,
      createdAt: row.created_at,
    }));
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
