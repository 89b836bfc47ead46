import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.ts';

const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  /** When refused: milliseconds until the window resets. */
  retryAfterMs: number;
}

/** Counts requests per key in fixed one-minute windows. */
export interface RateLimiter {
  take(keyId: string, perMinute: number): Promise<RateDecision> | RateDecision;
  close(): Promise<void>;
}

/** One process: counters in memory. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { window: number; count: number }>();

  constructor(private readonly clock: Clock) {}

  take(keyId: string, perMinute: number): RateDecision {
    const now = this.clock.now();
    const window = Math.floor(now / WINDOW_MS);
    let entry = this.windows.get(keyId);
    if (!entry || entry.window !== window) {
      if (this.windows.size > 100_000) this.windows.clear();
      entry = { window, count: 0 };
      this.windows.set(keyId, entry);
    }
    entry.count += 1;
    return { allowed: entry.count <= perMinute, retryAfterMs: (window + 1) * WINDOW_MS - now };
  }

  async close(): Promise<void> {}
}

/** Several processes: one Redis counter per key and window (INCR, expiring with the window). */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly clock: Clock,
  ) {
    this.fallback = new MemoryRateLimiter(clock);
  }

  private readonly fallback: MemoryRateLimiter;

  async take(keyId: string, perMinute: number): Promise<RateDecision> {
    try {
      return await this.takeShared(keyId, perMinute);
    } catch {
      // Redis is down: count on this node until it is back (DESIGN §14), rather than refuse or stop serving.
      return this.fallback.take(keyId, perMinute);
    }
  }

  private async takeShared(keyId: string, perMinute: number): Promise<RateDecision> {
    const now = this.clock.now();
    const window = Math.floor(now / WINDOW_MS);
    const name = `${this.prefix}rate:${keyId}:${window}`;
    const [[, count]] = (await this.redis.multi().incr(name).pexpire(name, WINDOW_MS * 2).exec()) as [[Error | null, number]];
    return { allowed: count <= perMinute, retryAfterMs: (window + 1) * WINDOW_MS - now };
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }
}
