import type { Logger } from 'pino';
import type { Clock } from './clock.ts';

/** A failed batch is tried again after this, doubling up to the maximum, until it succeeds. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;

/** What readiness reports about a batched writer (the ledger's, the request log's). */
export interface WriterHealth {
  ok: boolean;
  /** Items queued and not yet written (the batch being written not counted). */
  queued: number;
  /** Since when writes have been failing (Unix ms, the injected clock), if they are. */
  failingSince: number | undefined;
  lastError: string | undefined;
}

export interface BatchedWriterOptions<Item> {
  /** Names the writer in log lines: `<name> write failed; will retry`, `<name> writes succeed again`. */
  name: string;
  /** What an item is called in the failure's log line (`entries`, `rows`). */
  itemsLabel: string;
  /** How long after the first queued item a batch is written. */
  flushMs: number;
  clock: Clock;
  logger: Logger;
  /** Writes one batch, all or nothing; a rejection keeps the batch queued, in front, for the next try. */
  write(batch: Item[]): Promise<void>;
  /** Runs after each successful timed flush (upkeep such as retention); its failure is its own to handle. */
  afterTimedFlush?(): Promise<void>;
}

/**
 * A queue written in batches off the request path (the ledger's and the request log's writer): items are queued at once
 * and written within `flushMs`, one batch at a time. A batch that cannot be written stays queued, in order, and is tried
 * again with back-off — never left as an unhandled rejection, which would end the process. Items must carry their own ids
 * and writes must skip ids already written: a batch whose commit went through unacknowledged is then not counted twice.
 */
export class BatchedWriter<Item> {
  private queue: Item[] = [];
  private current: Promise<void> | undefined;
  private batch: readonly Item[] = [];
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private retryMs = RETRY_FIRST_MS;
  private failingSince: number | undefined;
  private lastError: string | undefined;

  constructor(private readonly options: BatchedWriterOptions<Item>) {}

  /** Queues an item; it is written within `flushMs`. */
  push(item: Item): void {
    this.queue.push(item);
    this.schedule(this.options.flushMs);
  }

  /** The batch being written, if one is. */
  get flushing(): Promise<void> | undefined {
    return this.current;
  }

  /** The batch being written, if one is (empty otherwise): written or not, the writer has not heard yet. */
  get writing(): readonly Item[] {
    return this.batch;
  }

  /** What waits to be written (not the batch in flight). */
  get queued(): readonly Item[] {
    return this.queue;
  }

  /** Writes every queued item; resolves when nothing queued before the call is still unwritten, rejects if the write failed. */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.current) await this.current;
    if (this.queue.length === 0) return;
    const batch = this.queue;
    this.queue = [];
    this.batch = batch;
    this.current = this.write(batch).finally(() => {
      this.current = undefined;
      this.batch = [];
    });
    await this.current;
  }

  /** The timer's flush: a failure is logged and retried with back-off. */
  private schedule(delayMs: number): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush()
        .then(() => this.options.afterTimedFlush?.())
        .catch(() => this.schedule(this.retryMs));
    }, delayMs);
  }

  private async write(batch: Item[]): Promise<void> {
    const { name, itemsLabel, clock, logger } = this.options;
    try {
      await this.options.write(batch);
      this.retryMs = RETRY_FIRST_MS;
      if (this.failingSince !== undefined) logger.info({ failedForMs: clock.now() - this.failingSince }, `${name} writes succeed again`);
      this.failingSince = undefined;
      this.lastError = undefined;
    } catch (error) {
      this.failingSince ??= clock.now();
      this.lastError = error instanceof Error ? error.message : String(error);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      logger.error({ err: error, [itemsLabel]: batch.length, queued: this.queue.length + batch.length }, `${name} write failed; will retry`);
      this.queue = batch.concat(this.queue);
      throw error;
    }
  }

  health(): WriterHealth {
    return { ok: this.failingSince === undefined, queued: this.queue.length, failingSince: this.failingSince, lastError: this.lastError };
  }

  /**
   * Stops the timer and writes what is queued, tried for `patienceMs` while writes fail. True when everything was written;
   * false when it gave up (what is left stays in `queued` for the caller to report).
   */
  async close(patienceMs: number): Promise<boolean> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + patienceMs;
    let delay = 100;
    for (;;) {
      try {
        await this.flush();
        return true;
      } catch {
        if (Date.now() + delay > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 2_000);
      }
    }
  }
}
