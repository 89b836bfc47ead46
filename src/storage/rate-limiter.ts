import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.ts';

const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** When refused: milliseconds until the window resets. */
  retryAfterMs: number;
}

/** What a counter holds in the current one-minute window. */
export interface WindowUsage {
  used: number;
  /** Milliseconds until the window resets. */
  resetsInMs: number;
}

/**
 * Counts per key in fixed one-minute windows: requests (`take`, one per call, refused beyond the limit) and amounts added
 * after the fact (`add`/`usage`, e.g. the tokens of finished calls). Counter names are the callers' (a key id, `tpm:<key id>`).
 */
export interface RateLimiter {
  take(counter: string, perMinute: number): Promise<RateDecision> | RateDecision;
  add(counter: string, amount: number): Promise<void> | void;
  usage(counter: string): Promise<WindowUsage> | WindowUsage;
  close(): Promise<void>;
}

const windowOf = (now: number): number => Math.floor(now / WINDOW_MS);
const resetsIn = (now: number): number => (windowOf(now) + 1) * WINDOW_MS - now;

/** One process: counters in memory. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { window: number; count: number }>();

  constructor(private readonly clock: Clock) {}

  private entry(counter: string, now: number): { window: number; count: number } {
    const window = windowOf(now);
    let entry = this.windows.get(counter);
    if (!entry || entry.window !== window) {
      if (this.windows.size > 100_000) this.windows.clear();
      entry = { window, count: 0 };
      this.windows.set(counter, entry);
    }
    return entry;
  }

  take(counter: string, perMinute: number): RateDecision {
    const now = this.clock.now();
    const entry = this.entry(counter, now);
    entry.count += 1;
    return { allowed: entry.count <= perMinute, retryAfterMs: resetsIn(now) };
  }

  add(counter: string, amount: number): void {
    this.entry(counter, this.clock.now()).count += amount;
  }

  usage(counter: string): WindowUsage {
    const now = this.clock.now();
    return { used: this.entry(counter, now).count, resetsInMs: resetsIn(now) };
  }

  async close(): Promise<void> {}
}

/** Several processes: one Redis counter per name and window (INCR/INCRBY, expiring with the window). */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly clock: Clock,
  ) {
    this.fallback = new MemoryRateLimiter(clock);
  }

  private readonly fallback: MemoryRateLimiter;

  private nameOf(counter: string, now: number): string {
    return `${this.prefix}rate:${counter}:${windowOf(now)}`;
  }

  async take(counter: string, perMinute: number): Promise<RateDecision> {
    try {
      const now = this.clock.now();
      const name = this.nameOf(counter, now);
      const [[, count]] = (await this.redis.multi().incr(name).pexpire(name, WINDOW_MS * 2).exec()) as [[Error | null, number]];
      return { allowed: count <= perMinute, retryAfterMs: resetsIn(now) };
    } catch {
      // Redis is down: count on this node until it is back (DESIGN §14), rather than refuse or stop serving.
      return this.fallback.take(counter, perMinute);
    }
  }

  async add(counter: string, amount: number): Promise<void> {
    try {
      const name = this.nameOf(counter, this.clock.now());
      await this.redis.multi().incrby(name, amount).pexpire(name, WINDOW_MS * 2).exec();
    } catch {
      this.fallback.add(counter, amount);
    }
  }

  async usage(counter: string): Promise<WindowUsage> {
    try {
      const now = this.clock.now();
      const value = await this.redis.get(this.nameOf(counter, now));
      return { used: Number(value ?? 0), resetsInMs: resetsIn(now) };
    } catch {
      return this.fallback.usage(counter);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
