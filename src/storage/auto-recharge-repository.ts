import { sql, type Kysely, type Selectable, type Transaction, type Updateable } from 'kysely';
import type { AccountRef } from '../features/accounts/accounts.ts';
import { AUTO_RECHARGE_JOB, CARD_DETACH_JOB, RECHARGE_INTERVAL_MS, type AutoRecharge, type AutoRechargeRepository } from '../features/payments/auto-recharge.ts';
import type { Payment, PaymentsRepository, SavedCard } from '../features/payments/payments.ts';
import type { Money } from '../lib/money.ts';
import type { SqlJobsRepository } from './jobs-repository.ts';
import { moneyTextOrNull } from './money-sql.ts';
import type { AutoRechargeTable, Database } from './schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;
type Row = Omit<Selectable<AutoRechargeTable>, 'threshold_nano' | 'amount_nano'> & { threshold: string | null; amount: string | null };

const COLUMNS = [
  'account_type', 'account_id', 'enabled', 'customer_id', 'payment_method', 'card_brand', 'card_last4', 'card_exp_month', 'card_exp_year',
  'last_attempt_at', 'last_payment_id', 'configured_by', 'updated_at', moneyTextOrNull('threshold_nano').as('threshold'), moneyTextOrNull('amount_nano').as('amount'),
] as const;

const toSettings = (row: Row): AutoRecharge => ({
  account: { type: row.account_type, id: row.account_id },
  enabled: row.enabled === 1,
  threshold: row.threshold === null ? null : BigInt(row.threshold),
  amount: row.amount === null ? null : BigInt(row.amount),
  customerId: row.customer_id,
  card:
    row.payment_method === null
      ? null
      : { paymentMethod: row.payment_method, brand: row.card_brand ?? 'card', last4: row.card_last4 ?? '', expMonth: Number(row.card_exp_month ?? 0), expYear: Number(row.card_exp_year ?? 0) },
  lastAttemptAt: row.last_attempt_at === null ? null : Number(row.last_attempt_at),
  lastPaymentId: row.last_payment_id,
  configuredBy: row.configured_by,
  updatedAt: Number(row.updated_at),
});

/** The threshold the ledger write compares balances with: set only while auto-recharge can charge. */
const triggerOf = (settings: AutoRecharge): Money | null => (settings.enabled && settings.card && settings.amount !== null ? settings.threshold : null);

export class SqlAutoRechargeRepository implements AutoRechargeRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly payments: PaymentsRepository,
    private readonly jobs: SqlJobsRepository,
  ) {}

  async get(account: AccountRef, executor: Executor = this.db): Promise<AutoRecharge | undefined> {
    const row = await executor.selectFrom('auto_recharge').select(COLUMNS).where('account_type', '=', account.type).where('account_id', '=', account.id).executeTakeFirst();
    return row && toSettings(row);
  }

  /** Creates the account's row when it has none, then applies `changes` and moves the account's trigger, in one transaction. */
  private update(account: AccountRef, changes: Omit<Updateable<AutoRechargeTable>, 'account_type' | 'account_id'>, now: number): Promise<AutoRecharge> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('auto_recharge')
        .values({ account_type: account.type, account_id: account.id, enabled: 0, updated_at: now })
        .onConflict((conflict) => conflict.columns(['account_type', 'account_id']).doNothing())
        .execute();
      const before = (await this.get(account, trx))!;
      await trx.updateTable('auto_recharge').set({ ...changes, updated_at: now }).where('account_type', '=', account.type).where('account_id', '=', account.id).execute();
      const settings = (await this.get(account, trx))!;
      const dropped = before.card?.paymentMethod;
      if (dropped && dropped !== settings.card?.paymentMethod) await this.jobs.enqueue(trx, { kind: CARD_DETACH_JOB, subjectId: dropped, runAt: now }, now);
      await trx
        .updateTable(account.type === 'user' ? 'users' : 'orgs')
        .set({ auto_recharge_below_nano: triggerOf(settings) })
        .where('id', '=', account.id)
        .execute();
      return settings;
    });
  }

  configure(account: AccountRef, choice: { enabled: boolean; threshold: Money | null; amount: Money | null; by: string }, now: number): Promise<AutoRecharge> {
    return this.update(account, { enabled: choice.enabled ? 1 : 0, threshold_nano: choice.threshold, amount_nano: choice.amount, configured_by: choice.by }, now);
  }

  async keepCustomer(account: AccountRef, customerId: string, now: number): Promise<string> {
    await this.db
      .insertInto('auto_recharge')
      .values({ account_type: account.type, account_id: account.id, enabled: 0, updated_at: now })
      .onConflict((conflict) => conflict.columns(['account_type', 'account_id']).doNothing())
      .execute();
    await this.db
      .updateTable('auto_recharge')
      .set({ customer_id: customerId })
      .where('account_type', '=', account.type)
      .where('account_id', '=', account.id)
      .where('customer_id', 'is', null)
      .execute();
    return (await this.get(account))?.customerId ?? customerId;
  }

  saveCard(account: AccountRef, card: SavedCard, now: number): Promise<AutoRecharge> {
    return this.update(
      account,
      { payment_method: card.paymentMethod, card_brand: card.brand, card_last4: card.last4, card_exp_month: card.expMonth, card_exp_year: card.expYear },
      now,
    );
  }

  removeCard(account: AccountRef, now: number): Promise<AutoRecharge> {
    return this.update(account, { enabled: 0, payment_method: null, card_brand: null, card_last4: null, card_exp_month: null, card_exp_year: null }, now);
  }

  async claim(account: AccountRef, paymentId: string, makePayment: (settings: AutoRecharge) => Payment, now: number, transaction?: unknown): Promise<Payment | undefined> {
    const work = async (trx: Executor): Promise<Payment | undefined> => {
      const claimed = await trx
        .updateTable('auto_recharge')
        .set({ last_attempt_at: now, last_payment_id: paymentId })
        .where('account_type', '=', account.type)
        .where('account_id', '=', account.id)
        .where('enabled', '=', 1)
        .where('payment_method', 'is not', null)
        .where('amount_nano', 'is not', null)
        .where((where) => where.or([where('last_attempt_at', 'is', null), where('last_attempt_at', '<=', sql<number>`${now - RECHARGE_INTERVAL_MS}`)]))
        .returning(COLUMNS)
        .executeTakeFirst();
      if (!claimed) return undefined;
      const payment = makePayment(toSettings(claimed));
      await this.payments.insert(payment, trx);
      await this.jobs.enqueue(trx, { kind: AUTO_RECHARGE_JOB, subjectId: payment.id, runAt: now }, now);
      return payment;
    };
    return transaction ? work(transaction as Transaction<Database>) : this.db.transaction().execute(work);
  }
}
