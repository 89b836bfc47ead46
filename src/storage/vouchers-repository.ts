import type { Kysely } from 'kysely';
import type { AccountRef } from '../features/accounts/accounts.ts';
import type { LedgerEntry, LedgerRepository } from '../features/billing/ledger.ts';
import type { Voucher, VoucherQuery, VouchersRepository } from '../features/vouchers/vouchers.ts';
import { containsText, decodeIdCursor, pageOf } from './list-pages.ts';
import { moneyText } from './money-sql.ts';
import type { Database, VouchersTable } from './schema.ts';

type VoucherRow = Omit<VouchersTable, 'amount_nano' | 'code_hash'> & { amount: string };

const COLUMNS = [
  'id', 'code_start', 'note', 'created_at', 'expires_at', 'voided_at', 'redeemed_at', 'redeemed_by', 'account_type', 'account_id', 'ledger_id',
  moneyText('amount_nano').as('amount'),
] as const;

const numberOrNull = (value: number | string | null): number | null => (value === null ? null : Number(value));

const toVoucher = (row: VoucherRow): Voucher => ({
  id: row.id,
  codeStart: row.code_start,
  amount: BigInt(row.amount),
  note: row.note,
  createdAt: Number(row.created_at),
  expiresAt: numberOrNull(row.expires_at),
  voidedAt: numberOrNull(row.voided_at),
  redeemedAt: numberOrNull(row.redeemed_at),
  redeemedBy: row.redeemed_by,
  account: row.account_type && row.account_id ? { type: row.account_type, id: row.account_id } : null,
  ledgerId: row.ledger_id,
});

export class SqlVouchersRepository implements VouchersRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: LedgerRepository,
  ) {}

  async insert(vouchers: ReadonlyArray<{ voucher: Voucher; codeHash: string }>): Promise<void> {
    if (vouchers.length === 0) return;
    await this.db
      .insertInto('vouchers')
      .values(
        vouchers.map(({ voucher, codeHash }) => ({
          id: voucher.id,
          code_hash: codeHash,
          code_start: voucher.codeStart,
          amount_nano: voucher.amount,
          note: voucher.note,
          created_at: voucher.createdAt,
          expires_at: voucher.expiresAt,
          voided_at: null,
          redeemed_at: null,
          redeemed_by: null,
          account_type: null,
          account_id: null,
          ledger_id: null,
        })),
      )
      .execute();
  }

  async get(id: string): Promise<Voucher | undefined> {
    const row = await this.db.selectFrom('vouchers').select(COLUMNS).where('id', '=', id).executeTakeFirst();
    return row && toVoucher(row);
  }

  async list(query: VoucherQuery): Promise<{ vouchers: Voucher[]; nextCursor: string | undefined }> {
    let select = this.db.selectFrom('vouchers').select(COLUMNS);
    if (query.query) select = select.where((eb) => eb.or([containsText('note', query.query!), containsText('code_start', query.query!)]));
    const unredeemed = select.where('redeemed_at', 'is', null);
    if (query.state === 'redeemed') select = select.where('redeemed_at', 'is not', null);
    else if (query.state === 'void') select = unredeemed.where('voided_at', 'is not', null);
    else if (query.state === 'expired') select = unredeemed.where('voided_at', 'is', null).where('expires_at', '<=', query.now);
    else if (query.state === 'active') {
      select = unredeemed.where('voided_at', 'is', null).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', query.now)]));
    }
    const after = query.cursor === undefined ? undefined : decodeIdCursor(query.cursor);
    if (after) select = select.where('id', '<', after);
    const rows = await select.orderBy('id', 'desc').limit(query.limit + 1).execute();
    const page = pageOf(rows, query.limit);
    return { vouchers: page.rows.map(toVoucher), nextCursor: page.nextCursor };
  }

  async void(id: string, at: number): Promise<Voucher | undefined> {
    const result = await this.db
      .updateTable('vouchers')
      .set({ voided_at: at })
      .where('id', '=', id)
      .where('redeemed_at', 'is', null)
      .where('voided_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1 ? this.get(id) : undefined;
  }

  async redeem(codeHash: string, redemption: { userId: string; account: AccountRef; at: number; entryId: string }, entryFor: (voucher: Voucher) => LedgerEntry): Promise<Voucher | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // The guarded update is the claim: a second redemption (here or in another process) finds no row left to update.
      const claimed = await trx
        .updateTable('vouchers')
        .set({ redeemed_at: redemption.at, redeemed_by: redemption.userId, account_type: redemption.account.type, account_id: redemption.account.id, ledger_id: redemption.entryId })
        .where('code_hash', '=', codeHash)
        .where('redeemed_at', 'is', null)
        .where('voided_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', redemption.at)]))
        .returning(COLUMNS)
        .executeTakeFirst();
      if (!claimed) return undefined;
      const voucher = toVoucher(claimed);
      await this.ledger.append([entryFor(voucher)], trx);
      return voucher;
    });
  }
}
