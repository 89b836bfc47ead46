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
  /** The API key whose call caused the movement (charges and their refunds); absent for credits. */
  keyId?: string | null;
  model: string | null;
  description: string;
  createdAt: number;
}

/** The process whose balance reservation a write consumes, and until when that reservation then holds. */
export interface LeaseUse {
  node: string;
  expiresAt: number;
}

export interface AppendResult {
  /** The balance of every account the write moved, keyed by `type:id`. */
  balances: Map<string, Money>;
  /** What is left of the node's reservation on each account its charges consumed (with `lease`). */
  reserved: Map<string, Money>;
}

/**
 * An account's balance before and after one ledger write, with the thresholds watched on it: its low-balance alert and its
 * auto-recharge trigger (only accounts that have at least one).
 */
export interface BalanceMove {
  account: AccountRef;
  before: Money;
  after: Money;
  lowBalanceAlert: Money | null;
  autoRechargeBelow: Money | null;
}

/** A debit crossed the threshold: the balance was at or above it before the write and is below it after. */
export const crossedBelow = (move: { before: Money; after: Money }, threshold: Money): boolean => move.before >= threshold && move.after < threshold;

/** One entry a ledger write inserted (an entry already written, repeated by a retried batch, is not one). */
export interface InsertedEntry {
  account: AccountRef;
  amount: Money;
  kind: LedgerKind;
  keyId: string | null;
  createdAt: number;
}

/** What one ledger write did, as its watchers see it inside its transaction. */
export interface LedgerWrite {
  /** Balances moved on accounts with a low-balance alert or an auto-recharge trigger. */
  moves: readonly BalanceMove[];
  /** The entries inserted. */
  inserted: readonly InsertedEntry[];
}

/**
 * Told, inside the ledger write's transaction, what it wrote and which balances it moved; what it writes with `transaction`
 * commits (or rolls back) with the entries, after the write's accounts were locked (so watchers lock only after them).
 * Low-balance and key-limit alerts (features/mail) are watchers.
 */
export type LedgerWatcher = (write: LedgerWrite, transaction: unknown) => Promise<void>;

/** An entry a node has recorded and not yet heard written: it may be in the ledger already (its commit went unacknowledged). */
export type UnwrittenEntry = Pick<LedgerEntry, 'id' | 'amount'>;

export interface LedgerRepository {
  /**
   * Writes the entries and moves each account's balance by the sum of its entries, in one transaction. An entry whose id is
   * already written is skipped, so writing a batch twice counts it once. With `transaction`, the writes join it (a task's
   * charge commits with the task); with `lease`, the charges also come off that node's reservation.
   */
  append(entries: readonly LedgerEntry[], transaction?: unknown, lease?: LeaseUse): Promise<AppendResult>;
  /**
   * Sets this node's reservation on the account to what `decide` returns, given the balance, what other nodes hold
   * reserved (unexpired) and what this node has recorded and not yet written, with the account locked meanwhile.
   * `unacknowledged` is read once the account is locked: the entries this node has recorded on the account and not yet heard
   * written. Those the ledger already holds do not count as unwritten — a batch whose commit went through before its
   * acknowledgement reached the node is in the balance, and counting it again would reserve it twice. Undefined for an
   * unknown account.
   */
  reserve(
    account: AccountRef,
    lease: LeaseUse,
    decide: (balance: Money, reservedByOthers: Money, unwritten: Money) => Money,
    now: number,
    unacknowledged?: () => readonly UnwrittenEntry[],
  ): Promise<{ balance: Money; reserved: Money } | undefined>;
  /** Gives back every reservation of the node (clean stop). */
  release(node: string): Promise<void>;
  balance(account: AccountRef): Promise<Money | undefined>;
  /** Newest first. */
  entries(account: AccountRef, limit: number): Promise<LedgerEntry[]>;
  /** The sum of all entries of the account (an audit of the balance). */
  sum(account: AccountRef): Promise<Money>;
  /** Newest first, strictly older than `before` when given (cursor pages). */
  page(account: AccountRef, limit: number, before?: LedgerPosition): Promise<LedgerEntry[]>;
  /** The sum of the account's entries up to and including `position`: the balance right after that entry. */
  sumThrough(account: AccountRef, position: LedgerPosition): Promise<Money>;
}

/** An entry's place in the ledger's order (time, then id). */
export interface LedgerPosition {
  createdAt: number;
  id: string;
}

export const accountKey = (account: AccountRef): string => `${account.type}:${account.id}`;
