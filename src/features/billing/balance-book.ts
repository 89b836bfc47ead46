import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { newId } from '../../lib/ids.ts';
import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import { accountKey, type LedgerEntry, type LedgerRepository } from './ledger.ts';

/** How long a balance read from the database serves the positive-balance check before it is read again. */
const REFRESH_AFTER_MS = 1_000;

interface AccountState {
  /** The balance in the database when last read or written by this process. */
  stored: Money;
  /** Local entries not yet written (queued or being written). */
  pending: Money;
  loadedAt: number;
  refreshing: boolean;
}

/** A movement to record: a ledger entry before it has its id and time. */
export type ChargeInput = Omit<LedgerEntry, 'id' | 'createdAt'>;

/**
 * Every balance change goes through here. Charges are applied to the in-memory balance at once and written to the ledger
 * in batches (one transaction per batch: ledger rows plus balance updates), so the database is off the request's critical path.
 * A clean stop flushes everything (`close`). The positive-balance check reads the memory copy, which is refreshed from the
 * database at most a second old, so several processes see each other's charges within that second.
 */
export class BalanceBook {
  private readonly accounts = new Map<string, AccountState>();
  private queue: LedgerEntry[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Counts completed writes; a balance read is only applied when no write completed while it was under way. */
  private writes = 0;

  constructor(
    private readonly repository: LedgerRepository,
    private readonly clock: Clock,
    private readonly flushMs: number,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {}

  /** The balance as this process sees it now (database + local pending entries); undefined for an unknown account. */
  async balance(account: AccountRef): Promise<Money | undefined> {
    const state = await this.state(account);
    return state ? state.stored + state.pending : undefined;
  }

  /** True when the account may spend: its balance is above zero. */
  async isPositive(account: AccountRef): Promise<boolean> {
    const balance = await this.balance(account);
    return balance !== undefined && balance > 0n;
  }

  /** Records a movement; applied in memory now, written within `flushMs`. Returns the entry. */
  record(input: ChargeInput): LedgerEntry {
    if (this.closed) throw new Error('balance book is closed');
    const entry: LedgerEntry = { id: newId('ledger'), ...input, createdAt: this.clock.now() };
    const key = accountKey(input.account);
    const state = this.accounts.get(key);
    if (state) state.pending += input.amount;
    else this.accounts.set(key, { stored: 0n, pending: input.amount, loadedAt: 0, refreshing: false });
    this.queue.push(entry);
    if (input.kind === 'charge' && input.requestId !== null) this.metrics?.charged.inc({ currency: this.metrics.currency }, Number(-input.amount) / 1e9);
    this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
    return entry;
  }

  /** Records a movement and waits until it is written; for admin credits and refunds callers read back at once. */
  async recordNow(input: ChargeInput): Promise<LedgerEntry> {
    const entry = this.record(input);
    await this.flush();
    return entry;
  }

  /** Writes every queued entry; resolves when nothing recorded before the call is still unwritten. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.flushing = this.write(batch).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private async write(batch: LedgerEntry[]): Promise<void> {
    try {
      const balances = await this.repository.append(batch);
      this.writes += 1;
      const now = this.clock.now();
      for (const entry of batch) {
        const state = this.accounts.get(accountKey(entry.account));
        if (state) state.pending -= entry.amount;
      }
      for (const [key, stored] of balances) {
        const state = this.accounts.get(key);
        if (state) {
          state.stored = stored;
          state.loadedAt = now;
        }
      }
    } catch (error) {
      // Keep the entries and try again: money is never dropped because the database blinked.
      this.logger.error({ err: error, entries: batch.length }, 'ledger write failed; will retry');
      this.queue = batch.concat(this.queue);
      if (!this.closed) this.timer ??= setTimeout(() => void this.flush(), Math.max(this.flushMs, 500));
      throw error;
    }
  }

  /** Forget the memory copy of an account (its balance changed elsewhere). */
  invalidate(account: AccountRef): void {
    const state = this.accounts.get(accountKey(account));
    if (state) state.loadedAt = 0;
  }

  private async state(account: AccountRef): Promise<AccountState | undefined> {
    const key = accountKey(account);
    const state = this.accounts.get(key);
    const now = this.clock.now();
    if (state && state.loadedAt > 0) {
      if (now - state.loadedAt > REFRESH_AFTER_MS && !state.refreshing) void this.refresh(account, state);
      return state;
    }
    while (this.flushing) await this.flushing;
    const generation = this.writes;
    const stored = await this.repository.balance(account);
    if (stored === undefined) return undefined;
    const current = this.accounts.get(key);
    if (current) {
      if (generation === this.writes && !this.flushing) {
        current.stored = stored;
        current.loadedAt = now;
      } else if (current.loadedAt === 0) {
        return this.state(account);
      }
      return current;
    }
    const created: AccountState = { stored, pending: 0n, loadedAt: now, refreshing: false };
    this.accounts.set(key, created);
    return created;
  }

  private async refresh(account: AccountRef, state: AccountState): Promise<void> {
    state.refreshing = true;
    try {
      // Read while nothing of ours is in flight, else the stored value could already include entries still counted as pending.
      while (this.flushing) await this.flushing;
      const generation = this.writes;
      const stored = await this.repository.balance(account);
      if (stored !== undefined && generation === this.writes && !this.flushing) {
        state.stored = stored;
        state.loadedAt = this.clock.now();
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'balance refresh failed');
    } finally {
      state.refreshing = false;
    }
  }

  /** Flushes and stops accepting entries; retries a failing write a few times before giving up loudly. */
  async close(): Promise<void> {
    this.closed = true;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        await this.flush();
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
      }
    }
    this.logger.fatal({ entries: this.queue.length }, 'ledger entries could not be written at shutdown');
  }
}
