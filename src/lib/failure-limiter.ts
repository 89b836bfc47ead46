import type { Clock } from './clock.ts';

/**
 * Counts failures (wrong admin tokens) per client in fixed windows, in this process's memory: each node counts its own, so
 * N nodes allow N times the limit, which still makes guessing hopeless. Successes are never counted.
 */
export class FailureLimiter {
  private readonly windows = new Map<string, { start: number; failures: number }>();

  constructor(
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  /** Milliseconds until `client` may try again; 0 when it may now. */
  blockedFor(client: string): number {
    const window = this.current(client);
    return window && window.failures >= this.limit ? window.start + this.windowMs - this.clock.now() : 0;
  }

  fail(client: string): void {
    const window = this.current(client);
    if (window) window.failures++;
    else {
      this.sweep();
      this.windows.set(client, { start: this.clock.now(), failures: 1 });
    }
  }

  private current(client: string): { start: number; failures: number } | undefined {
    const window = this.windows.get(client);
    return window && this.clock.now() - window.start < this.windowMs ? window : undefined;
  }

  /** Drops ended windows once many clients were seen, so a scan from many addresses cannot grow the map without end. */
  private sweep(): void {
    if (this.windows.size < 10_000) return;
    const now = this.clock.now();
    for (const [client, window] of this.windows) if (now - window.start >= this.windowMs) this.windows.delete(client);
  }
}
