import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';

export type LedgerKind = 'charge' | 'credit' | 'refund';

/** One movement of money on one account. Charges are negative; the balance is the sum of the account's entries. */
export interface LedgerEntry {
  id: string;
  account: AccountRef;
  amount: Money;
  kind: LedgerKind;
  requestId: string | null;
  model: string | null;
  description: string;
  createdAt: number;
}

export interface LedgerRepository {
  /**
   * Writes the entries and moves each account's balance by the sum of its entries, in one transaction.
   * Returns the balance of every touched account after the write, keyed by `type:id`. With `transaction`, the writes join
   * it (a task's charge commits with the task).
   */
  append(entries: readonly LedgerEntry[], transaction?: unknown): Promise<Map<string, Money>>;
  balance(account: AccountRef): Promise<Money | undefined>;
  /** Newest first. */
  entries(account: AccountRef, limit: number): Promise<LedgerEntry[]>;
  /** The sum of all entries of the account (an audit of the balance). */
  sum(account: AccountRef): Promise<Money>;
}

export const accountKey = (account: AccountRef): string => `${account.type}:${account.id}`;
