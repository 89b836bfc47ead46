/** A channel's state as the admin API and /metrics show it (DESIGN §12). */
export type ChannelState = 'healthy' | 'cooling' | 'probing';

/** Consecutive failures (connection errors, timeouts before the first byte, 5xx) that start a cool-down; a 429 starts one at once. */
export const COOL_AFTER_FAILURES = 3;
/** The first cool-down; each one that follows without a success in between doubles it, up to the cap. */
export const COOL_BASE_MS = 1_000;
export const COOL_MAX_MS = 60_000;
/** Attempts (outcomes and latencies) the error rate and the percentiles are computed over. */
const WINDOW = 256;

export interface ChannelHealthView {
  state: ChannelState;
  /** Attempts sent through the channel since this process started. */
  requests: number;
  /** Failed attempts (connection error, timeout, 429, 5xx) since this process started. */
  errors: number;
  /** Failed share of the last 256 attempts, 0..1. */
  errorRate: number;
  /** Time to the vendor's response head over the last 256 answered attempts; null before any. */
  latencyMs: { p50: number | null; p99: number | null };
  /** While cooling: when the channel may be probed again (Unix ms). */
  coolingUntil: number | null;
}

/**
 * One channel's health in this process: a small state machine and counters, updated on every attempt with plain field
 * writes (it is on the hot path) and read in full only by the admin API and /metrics.
 *
 * healthy → cooling after COOL_AFTER_FAILURES failures in a row, or at once on a 429; the cool-down lasts COOL_BASE_MS ×
 * 2^(cool-downs in a row − 1), capped at COOL_MAX_MS, and never less than the vendor's `retry-after`. When it is over the
 * channel is `probing`: exactly one request (the half-open probe) may go to it; its success makes the channel healthy again,
 * its failure cools it down again for twice as long.
 */
export class ChannelHealth {
  private state: 'healthy' | 'cooling' | 'probing' = 'healthy';
  private failuresInRow = 0;
  private coolDownsInRow = 0;
  private until = 0;
  private probeInFlight = false;
  /** The cool-down follows the vendor's own `retry-after` on a 429: nothing may reach the channel before it ends. */
  rateLimited = false;
  requests = 0;
  errors = 0;
  private readonly outcomes = new Uint8Array(WINDOW);
  private outcomesSeen = 0;
  private readonly latencies = new Float64Array(WINDOW);
  private latenciesSeen = 0;

  /** Whether a request may be sent now; a cool-down that has run out turns into `probing` here. */
  available(now: number): boolean {
    if (this.state === 'healthy') return true;
    if (this.state === 'cooling') {
      if (now < this.until) return false;
      this.state = 'probing';
      this.probeInFlight = false;
    }
    return !this.probeInFlight;
  }

  /** The router chose this channel for an attempt: a probing channel takes no other request until this one ends. */
  chosen(): void {
    this.requests += 1;
    if (this.state === 'probing') this.probeInFlight = true;
  }

  /** The vendor answered (any status but 429 and 5xx) after `latencyMs`. */
  succeeded(latencyMs: number): void {
    this.record(0);
    this.latencies[this.latenciesSeen % WINDOW] = latencyMs;
    this.latenciesSeen += 1;
    this.state = 'healthy';
    this.failuresInRow = 0;
    this.coolDownsInRow = 0;
    this.probeInFlight = false;
    this.rateLimited = false;
  }

  /** The attempt failed; `retryAfterMs` is the vendor's `retry-after` (429), `rateLimited` whether it was a 429. */
  failed(now: number, rateLimited: boolean, retryAfterMs: number | undefined): void {
    this.record(1);
    this.errors += 1;
    if (this.state === 'cooling') {
      // An attempt sent before the cool-down began: it only lengthens it to what the vendor asked for.
      if (retryAfterMs !== undefined) this.until = Math.max(this.until, now + retryAfterMs);
      return;
    }
    this.failuresInRow += 1;
    if (this.state === 'probing' || rateLimited || this.failuresInRow >= COOL_AFTER_FAILURES) this.coolDown(now, rateLimited && retryAfterMs !== undefined, retryAfterMs);
  }

  /** The attempt ended without an outcome (the client went away): a probe may be sent again. */
  abandoned(): void {
    this.probeInFlight = false;
  }

  /** When a cooling channel may be tried again (Unix ms); 0 when it is not cooling. */
  coolingUntil(now: number): number {
    return this.state === 'cooling' && now < this.until ? this.until : 0;
  }

  view(now: number): ChannelHealthView {
    const cooling = this.coolingUntil(now);
    const state: ChannelState = this.state === 'healthy' ? 'healthy' : cooling > 0 ? 'cooling' : 'probing';
    const seen = Math.min(this.outcomesSeen, WINDOW);
    let failed = 0;
    for (let index = 0; index < seen; index++) failed += this.outcomes[index]!;
    const latencies = Array.from(this.latencies.subarray(0, Math.min(this.latenciesSeen, WINDOW))).sort((a, b) => a - b);
    return {
      state,
      requests: this.requests,
      errors: this.errors,
      errorRate: seen === 0 ? 0 : Math.round((failed / seen) * 10_000) / 10_000,
      latencyMs: { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99) },
      coolingUntil: cooling > 0 ? cooling : null,
    };
  }

  private coolDown(now: number, rateLimited: boolean, retryAfterMs: number | undefined): void {
    this.coolDownsInRow += 1;
    const backOff = Math.min(COOL_BASE_MS * 2 ** (this.coolDownsInRow - 1), COOL_MAX_MS);
    this.state = 'cooling';
    this.until = now + Math.max(backOff, retryAfterMs ?? 0);
    this.failuresInRow = 0;
    this.probeInFlight = false;
    this.rateLimited = rateLimited;
  }

  private record(outcome: 0 | 1): void {
    this.outcomes[this.outcomesSeen % WINDOW] = outcome;
    this.outcomesSeen += 1;
  }
}

/** Nearest-rank percentile of sorted values, rounded to 0.1 ms; null for none. */
function percentile(sorted: readonly number[], share: number): number | null {
  if (sorted.length === 0) return null;
  const value = sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
  return Math.round(value * 10) / 10;
}
