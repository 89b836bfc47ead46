import { sql, type Kysely } from 'kysely';

/**
 * Card auto-recharge (issue 17). Per account, `auto_recharge` keeps the customer's choice (on/off, threshold, amount), the
 * vendor's customer and saved card, and `last_attempt_at`: claiming an attempt is one conditional update of that row ("none
 * in the last hour"), so the hourly rule holds across processes. The account rows carry `auto_recharge_below_nano`, the
 * threshold while auto-recharge is on with a card (else null), so the ledger write that moves a balance sees it in the row
 * it updates anyway. Payments gain `kind` (`checkout` | `auto_recharge`) and `failure`; an off-session charge has no Checkout
 * Session, so `session_id` becomes nullable (the table is rebuilt: SQLite cannot drop a NOT NULL in place).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('auto_recharge')
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('threshold_nano', 'bigint')
    .addColumn('amount_nano', 'bigint')
    .addColumn('customer_id', 'text')
    .addColumn('payment_method', 'text')
    .addColumn('card_brand', 'text')
    .addColumn('card_last4', 'text')
    .addColumn('card_exp_month', 'integer')
    .addColumn('card_exp_year', 'integer')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_payment_id', 'text')
    .addColumn('configured_by', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('auto_recharge_pk', ['account_type', 'account_id'])
    .execute();
  await db.schema.alterTable('users').addColumn('auto_recharge_below_nano', 'bigint').execute();
  await db.schema.alterTable('orgs').addColumn('auto_recharge_below_nano', 'bigint').execute();

  await db.schema
    .createTable('payments_next')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('kind', 'text', (column) => column.notNull().defaultTo('checkout'))
    .addColumn('session_id', 'text', (column) => column.unique())
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('amount_minor', 'bigint', (column) => column.notNull())
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('payment_intent', 'text')
    .addColumn('refunded_minor', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('lost_dispute', 'text')
    .addColumn('failure', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('paid_at', 'bigint')
    .execute();
  const columns = sql.raw('id, session_id, account_type, account_id, user_id, amount_nano, amount_minor, currency, status, payment_intent, refunded_minor, lost_dispute, created_at, paid_at');
  await sql`insert into payments_next (${columns}) select ${columns} from payments`.execute(db);
  await db.schema.dropTable('payments').execute();
  await db.schema.alterTable('payments_next').renameTo('payments').execute();
  await db.schema.createIndex('payments_account').on('payments').columns(['account_type', 'account_id', 'id']).execute();
  await db.schema.createIndex('payments_intent').on('payments').column('payment_intent').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('payments').dropColumn('failure').execute();
  await db.schema.alterTable('payments').dropColumn('kind').execute();
  await db.schema.alterTable('orgs').dropColumn('auto_recharge_below_nano').execute();
  await db.schema.alterTable('users').dropColumn('auto_recharge_below_nano').execute();
  await db.schema.dropTable('auto_recharge').execute();
}
