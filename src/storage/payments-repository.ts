import { PostgresAdapter, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { LedgerRepository } from '../features/billing/ledger.ts';
import type { Payment, PaymentQuery, PaymentsRepository, Settlement } from '../features/payments/payments.ts';
import { decodeIdCursor, pageOf } from './list-pages.ts';
import { moneyText } from './money-sql.ts';
import type { Database, PaymentsTable } from './schema.ts';

type PaymentRow = Omit<Selectable<PaymentsTable>, 'amount_nano'> & { amount: string };

const COLUMNS = [
  'id', 'kind', 'failure', 'session_id', 'account_type', 'account_id', 'user_id', 'amount_minor', 'currency', 'status', 'payment_intent', 'refunded_minor',
  'lost_dispute', 'created_at', 'paid_at', moneyText('amount_nano').as('amount'),
] as const;

const toPayment = (row: PaymentRow): Payment => ({
  id: row.id,
  kind: row.kind,
  sessionId: row.session_id,
  account: { type: row.account_type, id: row.account_id },
  userId: row.user_id,
  amount: BigInt(row.amount),
  minorAmount: Number(row.amount_minor),
  currency: row.currency,
  status: row.status,
  paymentIntent: row.payment_intent,
  refundedMinor: Number(row.refunded_minor),
  lostDispute: row.lost_dispute,
  failure: row.failure,
  createdAt: Number(row.created_at),
  paidAt: row.paid_at === null ? null : Number(row.paid_at),
});

export class SqlPaymentsRepository implements PaymentsRepository {
  private readonly postgres: boolean;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: LedgerRepository,
  ) {
    this.postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  }

  async insert(payment: Payment, transaction?: unknown): Promise<void> {
    await ((transaction as Transaction<Database> | undefined) ?? this.db)
      .insertInto('payments')
      .values({
        id: payment.id,
        kind: payment.kind,
        failure: payment.failure,
        session_id: payment.sessionId,
        account_type: payment.account.type,
        account_id: payment.account.id,
        user_id: payment.userId,
        amount_nano: payment.amount,
        amount_minor: payment.minorAmount,
        currency: payment.currency,
        status: payment.status,
        payment_intent: payment.paymentIntent,
        refunded_minor: payment.refundedMinor,
        lost_dispute: payment.lostDispute,
        created_at: payment.createdAt,
        paid_at: payment.paidAt,
      })
      .execute();
  }

  async get(id: string): Promise<Payment | undefined> {
    const row = await this.db.selectFrom('payments').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toPayment(row);
  }

  async find(reference: { id?: string; sessionId?: string; paymentIntent?: string }): Promise<Payment | undefined> {
    for (const [column, value] of [['id', reference.id], ['session_id', reference.sessionId], ['payment_intent', reference.paymentIntent]] as const) {
      if (value === undefined) continue;
      const row = await this.db.selectFrom('payments').select(COLUMNS).where(column, '=', value).executeTakeFirst();
      if (row) return toPayment(row);
    }
    return undefined;
  }

  async list(query: PaymentQuery): Promise<{ payments: Payment[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('payments').select(COLUMNS);
    if (query.account) select = select.where('account_type', '=', query.account.type).where('account_id', '=', query.account.id);
    const after = query.cursor === undefined ? undefined : decodeIdCursor(query.cursor);
    if (after) select = select.where('id', '<', after);
    const rows = await select.orderBy('id', 'desc').limit(query.limit + 1).execute();
    const page = pageOf(rows, query.limit);
    return { payments: page.rows.map(toPayment), nextCursor: page.nextCursor };
  }

  async settle(id: string, decide: (payment: Payment) => Settlement): Promise<{ payment: Payment; applied: boolean } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // PostgreSQL: the row lock orders concurrent deliveries; SQLite: the write transaction does (one writer at a time).
      let select = trx.selectFrom('payments').select(COLUMNS).where('id', '=', id);
      if (this.postgres) select = select.forUpdate();
      const row = await select.executeTakeFirst();
      if (!row) return undefined;
      const payment = toPayment(row);
      const settlement = decide(payment);
      if (!settlement) return { payment, applied: false };
      const { changes, entries } = settlement;
      await trx
        .updateTable('payments')
        .set({
          ...(changes.status !== undefined ? { status: changes.status } : {}),
          ...(changes.paymentIntent !== undefined ? { payment_intent: changes.paymentIntent } : {}),
          ...(changes.refundedMinor !== undefined ? { refunded_minor: changes.refundedMinor } : {}),
          ...(changes.lostDispute !== undefined ? { lost_dispute: changes.lostDispute } : {}),
          ...(changes.paidAt !== undefined ? { paid_at: changes.paidAt } : {}),
          ...(changes.failure !== undefined ? { failure: changes.failure } : {}),
        })
        .where('id', '=', id)
        .execute();
      if (entries.length > 0) await this.ledger.append(entries, trx);
      return { payment: { ...payment, ...changes }, applied: true };
    });
  }
}
