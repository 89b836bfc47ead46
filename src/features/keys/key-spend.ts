import type { Clock } from '../../lib/clock.ts';
import type { Money } from '../../lib/money.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import type { ApiKey, SpendPeriod } from './keys.ts';
import { periodEnd, periodStart } from './spend-periods.ts';

/** How long a key's spend read from the ledger serves before it is read again in the background (other nodes' charges). */
const REFRESH_AFTER_MS = 30_000;
const STATE_LIMIT = 100_000;

/**
 * Where spending comes from: the ledger (Σ per key since a UTC midnight, kept by day as it is written) and the balance
 * book's queue of unwritten entries.
 */
export interface SpendSource {
  spentSince(keyId: string, since: number): Promise<Money>;
  /** Writes every entry recorded so far, so a following read of the ledger sees them. */
  flush(): Promise<void>;
}

interface SpendState {
  period: SpendPeriod;
  start: number;
  /** When the period ends (the next one's start). */
  end: number;
  /** Spent in the period as the ledger said when last read. */
  stored: Money;
  /** Charges and refunds this process recorded since that read began. */
  local: Money;
  /** While a read is under way: what this process recorded since it began (becomes `local` when it ends). */
  sinceRead: Money | undefined;
  loadedAt: number;
  loading: Promise<void> | undefined;
}

/** The alert level `spent` reaches of `limit`: 100 at or beyond it, 80 from four fifths, else 0. */
export function limitLevel(spent: Money, limit: Money): 0 | 80 | 100 {
  if (limit <= 0n) return 0;
  if (spent >= limit) return 100;
  return spent * 5n >= limit * 4n ? 80 : 0;
}

/**
 * Each key's spend in its current UTC calendar period, kept in memory like balances: read once from the ledger (Σ of the
 * key's charges and refunds since the period began, a sum of the key's days in key_spend_daily), then moved by every entry
 * this process records (`observe`). Other processes' spending reaches it when the read is repeated, in the background,
 * every REFRESH_AFTER_MS; so across N processes a key may overspend by what the other processes charged it since the last
 * read, plus the calls in flight.
 */
export class KeySpendBook {
  private readonly states = new Map<string, SpendState>();

  constructor(
    private readonly source: SpendSource,
    private readonly clock: Clock,
  ) {}

  /**
   * What the key spent in its limit's current period (the whole of time for a key without a limit). A number, not a
   * promise, when this process knows it (every call but a period's first and those during a read): it is on every billed
   * call's path.
   */
  spent(key: ApiKey): Money | Promise<Money> {
    const period = key.limit?.period ?? 'total';
    const now = this.clock.now();
    let state = this.states.get(key.id);
    // The period's bounds are worked out (a Date and Date.UTC, ~1 µs) only when the key's period is not the one known.
    if (!state || state.period !== period || now >= state.end || now < state.start) {
      if (this.states.size >= STATE_LIMIT) this.states.clear();
      const start = periodStart(period, now);
      state = { period, start, end: periodEnd(period, start), stored: 0n, local: 0n, sinceRead: undefined, loadedAt: 0, loading: undefined };
      this.states.set(key.id, state);
      void this.read(key.id, state);
    } else if (now - state.loadedAt >= REFRESH_AFTER_MS) {
      void this.read(key.id, state);
    }
    const known = state;
    return known.loading ? known.loading.then(() => known.stored + known.local) : known.stored + known.local;
  }

  /** Moves the spend of the entry's key by one recorded entry (the balance book calls it for every entry). */
  observe(entry: LedgerEntry): void {
    if (!entry.keyId || (entry.kind !== 'charge' && entry.kind !== 'refund')) return;
    const state = this.states.get(entry.keyId);
    if (!state || entry.createdAt < state.start) return;
    state.local -= entry.amount;
    if (state.sinceRead !== undefined) state.sinceRead -= entry.amount;
  }

  private read(keyId: string, state: SpendState): Promise<void> {
    state.loading ??= this.load(keyId, state).finally(() => {
      state.loading = undefined;
    });
    return state.loading;
  }

  /**
   * Writes what this process recorded, then sums the ledger; entries recorded meanwhile are kept apart and added after.
   * One written during the sum may be counted twice, so the spend errs high by at most a flush's worth of calls.
   */
  private async load(keyId: string, state: SpendState): Promise<void> {
    state.loadedAt = this.clock.now();
    try {
      await this.source.flush();
      state.sinceRead = 0n;
      const stored = await this.source.spentSince(keyId, state.start);
      state.stored = stored;
      state.local = state.sinceRead;
    } catch {
      // The database is unreachable: the spend known so far decides until the next read (DESIGN §14: keep serving).
    } finally {
      state.sinceRead = undefined;
    }
  }
}
