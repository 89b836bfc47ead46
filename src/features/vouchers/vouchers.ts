import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { LedgerEntry } from '../billing/ledger.ts';

/** Where a voucher stands: `active` until redeemed, voided by the operator, or past its expiry. */
export const VOUCHER_STATES = ['active', 'redeemed', 'void', 'expired'] as const;
export type VoucherState = (typeof VOUCHER_STATES)[number];

/** A prepaid code as stored: never the code itself, only its first characters (`codeStart`) and its hash. */
export interface Voucher {
  id: string;
  codeStart: string;
  amount: Money;
  note: string | null;
  /** Unix milliseconds, like every time below. */
  createdAt: number;
  expiresAt: number | null;
  voidedAt: number | null;
  redeemedAt: number | null;
  /** The user who redeemed it, and the account it credited (theirs or one of their orgs). */
  redeemedBy: string | null;
  account: AccountRef | null;
  ledgerId: string | null;
}

export interface VoucherQuery {
  /** Matches the note or the code's start. */
  query?: string;
  state?: VoucherState;
  limit: number;
  cursor?: string;
  /** For `state`: whether an unredeemed voucher has expired. */
  now: number;
}

export interface VouchersRepository {
  insert(vouchers: ReadonlyArray<{ voucher: Voucher; codeHash: string }>): Promise<void>;
  get(id: string): Promise<Voucher | undefined>;
  /** Newest first; `nextCursor` undefined on the last page. */
  list(query: VoucherQuery): Promise<{ vouchers: Voucher[]; nextCursor: string | undefined }>;
  /** Voids an unredeemed, unvoided voucher; undefined when there was none such. */
  void(id: string, at: number): Promise<Voucher | undefined>;
  /**
   * Marks the live voucher with this code hash redeemed and writes its credit (`entryFor` builds it from the voucher) in ONE
   * transaction, guarded by "not yet redeemed, not void, not expired": of concurrent redemptions, in one process or several,
   * exactly one credits. The entry's id is `entryId` (kept on the voucher). Undefined when no live voucher has this code.
   */
  redeem(codeHash: string, redemption: { userId: string; account: AccountRef; at: number; entryId: string }, entryFor: (voucher: Voucher) => LedgerEntry): Promise<Voucher | undefined>;
}

export function voucherState(voucher: Voucher, now: number): VoucherState {
  if (voucher.redeemedAt !== null) return 'redeemed';
  if (voucher.voidedAt !== null) return 'void';
  if (voucher.expiresAt !== null && voucher.expiresAt <= now) return 'expired';
  return 'active';
}
