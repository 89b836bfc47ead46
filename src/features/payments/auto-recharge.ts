import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { Payment, SavedCard } from './payments.ts';

/** At most one auto-recharge attempt per account in this long (issue 17), whatever its outcome. */
export const RECHARGE_INTERVAL_MS = 3_600_000;

/** The job kind that charges the saved card for one claimed attempt. */
export const AUTO_RECHARGE_JOB = 'payment.auto_recharge';

/** The job kind that detaches a removed or replaced card at the vendor (its subject: the card's payment method id). */
export const CARD_DETACH_JOB = 'payment.card_detach';

/** An account's auto-recharge: the customer's choice, the vendor's customer and card, and the last attempt. */
export interface AutoRecharge {
  account: AccountRef;
  enabled: boolean;
  /** A debit that takes the balance below this charges the card (null until first set). */
  threshold: Money | null;
  /** What each recharge adds (between TOLLGATE_TOPUP_MIN and MAX). */
  amount: Money | null;
  /** The vendor's customer of the account (`cus_…`), made when a card is first saved. */
  customerId: string | null;
  card: SavedCard | null;
  /** When the last attempt was claimed (the hourly rule counts from it). */
  lastAttemptAt: number | null;
  lastPaymentId: string | null;
  /** Who last set the choice: its charges name them as the payer. */
  configuredBy: string | null;
  updatedAt: number;
}

/** An account's auto-recharge rows (storage/auto-recharge-repository.ts). */
export interface AutoRechargeRepository {
  get(account: AccountRef): Promise<AutoRecharge | undefined>;
  /**
   * Writes the customer's choice; the account row's trigger (`auto_recharge_below_nano`: the threshold while on with a
   * card, else null) follows in the same transaction, so the ledger write sees it.
   */
  configure(account: AccountRef, choice: { enabled: boolean; threshold: Money | null; amount: Money | null; by: string }, now: number): Promise<AutoRecharge>;
  /** Keeps the vendor's customer of the account; when one was kept already (a concurrent first save), that one is answered. */
  keepCustomer(account: AccountRef, customerId: string, now: number): Promise<string>;
  /**
   * The card a setup saved (replacing any other); the trigger follows. A card it replaces gets a CARD_DETACH_JOB in the
   * same transaction, as does the card `removeCard` forgets: the vendor stops holding it even if it cannot be asked now.
   */
  saveCard(account: AccountRef, card: SavedCard, now: number): Promise<AutoRecharge>;
  /** Forgets the card and turns auto-recharge off. */
  removeCard(account: AccountRef, now: number): Promise<AutoRecharge>;
  /**
   * The hourly rule, in the database: when auto-recharge is on with a card and no attempt was claimed in the last
   * RECHARGE_INTERVAL_MS, notes this one (one conditional update, so concurrent claims of several processes leave one), then
   * writes the payment `makePayment` returns and its AUTO_RECHARGE_JOB. Undefined when nothing was claimed. With
   * `transaction`, all of it commits with the caller's writes (the ledger write whose debit crossed the threshold).
   */
  claim(account: AccountRef, paymentId: string, makePayment: (settings: AutoRecharge) => Payment, now: number, transaction?: unknown): Promise<Payment | undefined>;
}
