import type { Logger } from 'pino';
import { BatchedWriter, type WriterHealth } from '../../lib/batched-writer.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import { nextReservation, RESERVATION_TTL_MS } from './reservation.ts';
import { accountKey, type LedgerEntry, type LedgerRepository } from './ledger.ts';

/** How long a balance read from the database serves `balance()` before it is read again. */
const REFRESH_AFTER_MS = 1_000;

interface AccountState {
  /** The balance in the database when last read or written by this process. */
  stored: Money;
  /** Local entries not yet written (queued or being written). */
  pending: Money;
  loadedAt: number;
  refreshing: boolean;
  /** What this process holds reserved of the balance in the database (charges written so far already taken off). */
  reserved: Money;
  /** When the reservation lapses (other processes stop counting it then); 0 for none. */
  reservedUntil: number;
  reserving: Promise<boolean> | undefined;
}

/** A movement to record: a ledger entry before it has its time (and, unless the caller fixes it, its id). */
export type ChargeInput = Omit<LedgerEntry, 'id' | 'createdAt'> & { id?: string };

/** What readiness reports about the ledger: its writer's health (`queued`: entries recorded and not yet written). */
export type LedgerHealth = WriterHealth;

/**
 * Every balance change goes through here. Charges are applied in memory at once and written to the ledger in batches (one
 * transaction per batch: ledger rows plus balance updates), so the database is off the request's critical path. A batch that
 * cannot be written stays queued and is tried again with back-off; a clean stop flushes everything (`close`).
 *
 * Spending is admitted against a reservation this process holds in the database (`balance_leases`): a slice of what the
 * account has left after the other processes' reservations. Requests run on the slice from memory; only when it is used up
 * does a request wait for a new one. So N processes on one balance overdraw it by at most the requests in flight, never by
 * a cached balance's worth of later requests (DESIGN §14).
 */
export class BalanceBook {
  private readonly accounts = new Map<string, AccountState>();
  /** Entries are written in batches (one transaction each: ledger rows plus balance updates), retried until they succeed. */
  private readonly writer: BatchedWriter<LedgerEntry>;
  private closed = false;
  /** Counts completed writes; a balance read is only applied when no write completed while it was under way. */
  private writes = 0;
  /** This process, as the holder of reservations. */
  readonly node = `n_${randomBase62(12)}`;
  /** Told of every entry as it is recorded or announced (keys' spend per period, the request log's costs). */
  private readonly listeners: Array<(entry: LedgerEntry) => void> = [];

  constructor(
    private readonly repository: LedgerRepository,
    private readonly clock: Clock,
    flushMs: number,
    private readonly logger: Logger,
    private readonly metrics?: Metrics,
  ) {
    this.writer = new BatchedWriter({ name: 'ledger', itemsLabel: 'entries', flushMs, clock, logger, write: (batch) => this.write(batch) });
  }

  /** The batch being written, if one is: balance reads wait for it. */
  private get flushing(): Promise<void> | undefined {
    return this.writer.flushing;
  }

  /** The balance as this process sees it now (database + local pending entries); undefined for an unknown account. */
  async balance(account: AccountRef): Promise<Money | undefined> {
    const state = await this.state(account);
    return state ? state.stored + state.pending : undefined;
  }

  /**
   * True when the account may spend now. Served from this process's reservation while some of it is left; otherwise a new
   * reservation is taken from what the account has left. While the database cannot be reached, the last known balance
   * decides, so a database restart does not stop the gateway. No promise while the reservation serves: it is on every
   * billed call's path.
   */
  isPositive(account: AccountRef): boolean | Promise<boolean> {
    const known = this.loadedState(account);
    if (known !== undefined) return this.mayDraw(account, known);
    return this.state(account).then((state) => (state ? this.mayDraw(account, state) : false));
  }

  private mayDraw(account: AccountRef, state: AccountState): boolean | Promise<boolean> {
    if (this.allowance(state) > 0n) return true;
    state.reserving ??= this.reserve(account, state).finally(() => {
      state.reserving = undefined;
    });
    return state.reserving;
  }

  private allowance(state: AccountState): Money {
    if (state.reservedUntil <= this.clock.now()) return 0n;
    return state.reserved + (state.pending < 0n ? state.pending : 0n);
  }

  private async reserve(account: AccountRef, state: AccountState): Promise<boolean> {
    const now = this.clock.now();
    const expiresAt = now + RESERVATION_TTL_MS;
    try {
      const result = await this.repository.reserve(
        account,
        { node: this.node, expiresAt },
        (balance, reservedByOthers, unwritten) => nextReservation(balance, reservedByOthers, unwritten < 0n ? unwritten : 0n),
        now,
        () => this.unacknowledged(account),
      );
      if (!result) return false;
      state.reserved = result.reserved;
      state.reservedUntil = expiresAt;
      return this.allowance(state) > 0n;
    } catch (error) {
      this.logger.warn({ err: error }, 'balance reservation failed; deciding from the last known balance');
      return state.stored + state.pending > 0n;
    }
  }

  /**
   * The account's entries recorded and not yet heard written (their sum is its `pending`): the batch being written, then the
   * queue. The reservation asks the ledger which of them it already holds.
   */
  private unacknowledged(account: AccountRef): LedgerEntry[] {
    const key = accountKey(account);
    const entries: LedgerEntry[] = [];
    for (const entry of this.writer.writing) if (accountKey(entry.account) === key) entries.push(entry);
    for (const entry of this.writer.queued) if (accountKey(entry.account) === key) entries.push(entry);
    return entries;
  }

  /** An entry a caller wrote in its own transaction (a task's charge commits with the task): the listeners hear of it too. */
  announce(entry: LedgerEntry): void {
    for (const listener of this.listeners) listener(entry);
  }

  /** Records a movement; applied in memory now, written within `flushMs`. Returns the entry. */
  record(input: ChargeInput): LedgerEntry {
    if (this.closed) throw new Error('balance book is closed');
    // Field by field: a spread given the fields its source lacks cost ~7 µs a charge under load (lib/objects.ts).
    const entry: LedgerEntry = {
      id: input.id ?? newId('ledger'),
      account: input.account,
      amount: input.amount,
      kind: input.kind,
      requestId: input.requestId,
      keyId: input.keyId,
      model: input.model,
      description: input.description,
      createdAt: this.clock.now(),
    };
    const key = accountKey(input.account);
    const state = this.accounts.get(key);
    if (state) state.pending += input.amount;
    else this.accounts.set(key, { ...emptyState(), pending: input.amount });
    this.writer.push(entry);
    for (const listener of this.listeners) listener(entry);
    if (input.kind === 'charge' && input.requestId !== null) this.metrics?.countCharged(Number(-input.amount) / 1e9);
    return entry;
  }

  /** Calls `listener` with every entry recorded or announced from now on, synchronously. */
  onRecord(listener: (entry: LedgerEntry) => void): void {
    this.listeners.push(listener);
  }

  /** Records a movement and waits until it is written; for admin credits and refunds callers read back at once. */
  async recordNow(input: ChargeInput): Promise<LedgerEntry> {
    const entry = this.record(input);
    await this.flush();
    return entry;
  }

  /** Writes every queued entry; resolves when nothing recorded before the call is still unwritten, rejects if the write failed. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /**
   * One batch: ledger rows and balances in one transaction, then the memory copies of the balances and reservations it
   * moved. A failure leaves the entries queued (the writer retries them): money is never dropped because the database
   * blinked, and entries keep their ids, so a batch whose commit went through unacknowledged is not counted twice.
   */
  private async write(batch: LedgerEntry[]): Promise<void> {
    const lease = { node: this.node, expiresAt: this.clock.now() + RESERVATION_TTL_MS };
    const { balances, reserved } = await this.repository.append(batch, undefined, lease);
    this.writes += 1;
    const now = this.clock.now();
    for (const entry of batch) {
      const state = this.accounts.get(accountKey(entry.account));
      if (state) state.pending -= entry.amount;
    }
    for (const [key, stored] of balances) {
      const state = this.accounts.get(key);
      if (!state) continue;
      state.stored = stored;
      state.loadedAt = now;
      const left = reserved.get(key);
      if (left !== undefined) {
        state.reserved = left;
        state.reservedUntil = lease.expiresAt;
      }
    }
  }

  /** For readiness: whether ledger writes are succeeding and how much waits to be written. */
  health(): LedgerHealth {
    return this.writer.health();
  }

  /** Forget the memory copy of an account (its balance changed elsewhere). */
  invalidate(account: AccountRef): void {
    const state = this.accounts.get(accountKey(account));
    if (state) state.loadedAt = 0;
  }

  /** The memory copy of an account's balance when it was loaded (a refresh started in the background when it is old). */
  private loadedState(account: AccountRef): AccountState | undefined {
    const state = this.accounts.get(accountKey(account));
    if (!state || state.loadedAt <= 0) return undefined;
    if (this.clock.now() - state.loadedAt > REFRESH_AFTER_MS && !state.refreshing) void this.refresh(account, state);
    return state;
  }

  private async state(account: AccountRef): Promise<AccountState | undefined> {
    const loaded = this.loadedState(account);
    if (loaded) return loaded;
    const key = accountKey(account);
    const now = this.clock.now();
    while (this.flushing) await this.flushing.catch(() => undefined);
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
    const created: AccountState = { ...emptyState(), stored, loadedAt: now };
    this.accounts.set(key, created);
    return created;
  }

  private async refresh(account: AccountRef, state: AccountState): Promise<void> {
    state.refreshing = true;
    try {
      // Read while nothing of ours is in flight, else the stored value could already include entries still counted as pending.
      while (this.flushing) await this.flushing.catch(() => undefined);
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

  /**
   * Flushes, gives back this process's reservations and stops accepting entries. A write that keeps failing is tried for
   * `patienceMs`; what still cannot be written then is logged entry by entry (the process is going away).
   */
  async close(patienceMs = 20_000): Promise<void> {
    this.closed = true;
    if (!(await this.writer.close(patienceMs))) {
      this.logger.fatal({ entries: this.writer.queued.map((entry) => ({ ...entry, amount: entry.amount.toString() })) }, 'ledger entries could not be written at shutdown');
      return;
    }
    await this.repository.release(this.node).catch((error: unknown) => this.logger.warn({ err: error }, 'balance reservations not released; they lapse on their own'));
  }
}

const emptyState = (): AccountState => ({ stored: 0n, pending: 0n, loadedAt: 0, refreshing: false, reserved: 0n, reservedUntil: 0, reserving: undefined });
