import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import { payerOf } from '../inference/model-call.ts';
import { RequestTrace } from './request-trace.ts';
import type { CostAdjustment, RequestLogRepository, RequestLogRow } from './request-log.ts';

const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;
/** Retention and partition upkeep run at most this often (and at start). */
const MAINTAIN_EVERY_MS = 60 * 60_000;
const DAY_MS = 86_400_000;

export interface RequestLogOptions {
  /** TOLLGATE_REQUEST_LOG=off: traces still collect (x-tollgate-cost needs them), nothing is written. */
  enabled: boolean;
  flushMs: number;
  retentionDays: number;
}

/** What readiness reports about the request log (the same shape as the ledger's). */
export interface RequestLogHealth {
  ok: boolean;
  queued: number;
  failingSince: number | undefined;
  lastError: string | undefined;
}

/**
 * The request log's writer. Each request gets a trace (`begin`); a settled trace becomes a row in a queue, written in
 * batches off the request path with the rollups it moves (one transaction), like the ledger: a failed batch stays queued
 * and is retried with back-off, never left as an unhandled rejection; `close` flushes. The ledger's charges reach the
 * trace of their request through `charged`, so a row's cost is exactly what the ledger booked for it.
 */
export class RequestLog {
  private readonly open = new Map<string, RequestTrace>();
  private rows: RequestLogRow[] = [];
  private adjustments: CostAdjustment[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private retryMs = RETRY_FIRST_MS;
  private failingSince: number | undefined;
  private lastError: string | undefined;
  private maintainedAt = Number.NEGATIVE_INFINITY;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly repository: RequestLogRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: RequestLogOptions,
  ) {}

  /** A new request's trace; `startedAt` is performance.now() at its start. */
  begin(id: string, startedAt: number): RequestTrace {
    const trace = new RequestTrace(id, this.clock.now(), startedAt, this.settled);
    this.open.set(id, trace);
    return trace;
  }

  /** Every charge the ledger books: counted on its request's trace while that request is open. */
  readonly charged = (entry: LedgerEntry): void => {
    if (entry.kind !== 'charge' || entry.requestId === null) return;
    this.open.get(entry.requestId)?.charged(entry.amount);
  };

  /** A later change of a task's cost (refund or correction), applied to the rollup its request counted in. */
  adjust(adjustment: CostAdjustment): void {
    if (!this.options.enabled || this.closed) return;
    this.adjustments.push(adjustment);
    this.schedule(this.options.flushMs);
  }

  private readonly settled = (trace: RequestTrace): void => {
    this.open.delete(trace.id);
    const row = this.options.enabled && !this.closed ? rowOf(trace) : undefined;
    if (row) {
      this.rows.push(row);
      this.schedule(this.options.flushMs);
    }
    if (this.open.size === 0) this.wake();
  };

  /** Resolves once no request is open and everything settled so far is written (tests, clean stops). */
  async idle(): Promise<void> {
    while (this.open.size > 0) await new Promise<void>((resolve) => this.waiters.push(resolve));
    await this.flush();
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.flushing) await this.flushing;
    if (this.rows.length === 0 && this.adjustments.length === 0) return;
    const rows = this.rows;
    const adjustments = this.adjustments;
    this.rows = [];
    this.adjustments = [];
    this.flushing = this.write(rows, adjustments).finally(() => {
      this.flushing = undefined;
    });
    await this.flushing;
  }

  private schedule(delayMs: number): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.flush()
        .then(() => this.maintain())
        .catch(() => this.schedule(this.retryMs));
    }, delayMs);
  }

  private async write(rows: RequestLogRow[], adjustments: CostAdjustment[]): Promise<void> {
    try {
      await this.repository.append(rows, adjustments);
      this.retryMs = RETRY_FIRST_MS;
      if (this.failingSince !== undefined) this.logger.info({ failedForMs: this.clock.now() - this.failingSince }, 'request log writes succeed again');
      this.failingSince = undefined;
      this.lastError = undefined;
    } catch (error) {
      // Rows keep their ids and the write skips ids already written, so a batch whose commit went through unacknowledged
      // is not counted twice in the rollups when written again.
      this.failingSince ??= this.clock.now();
      this.lastError = error instanceof Error ? error.message : String(error);
      this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
      this.logger.error({ err: error, rows: rows.length, queued: this.rows.length + rows.length }, 'request log write failed; will retry');
      this.rows = rows.concat(this.rows);
      this.adjustments = adjustments.concat(this.adjustments);
      throw error;
    }
  }

  /** Retention and the partitions ahead, at most hourly; a failure is logged and tried at the next flush. */
  async maintain(force = false): Promise<void> {
    const now = this.clock.now();
    if (!this.options.enabled || (!force && now - this.maintainedAt < MAINTAIN_EVERY_MS)) return;
    this.maintainedAt = now;
    try {
      await this.repository.maintain(now, now - this.options.retentionDays * DAY_MS);
    } catch (error) {
      this.maintainedAt = Number.NEGATIVE_INFINITY;
      this.logger.warn({ err: error }, 'request log retention failed; will try again');
    }
  }

  health(): RequestLogHealth {
    return { ok: this.failingSince === undefined, queued: this.rows.length + this.adjustments.length, failingSince: this.failingSince, lastError: this.lastError };
  }

  /** Writes what is queued (tried for `patienceMs` while writes fail), then stops accepting rows. */
  async close(patienceMs = 20_000): Promise<void> {
    const deadline = Date.now() + patienceMs;
    let delay = 100;
    for (;;) {
      try {
        await this.flush();
        break;
      } catch {
        if (Date.now() + delay > deadline) {
          this.logger.error({ rows: this.rows.length }, 'request log rows could not be written at shutdown');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 2_000);
      }
    }
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}

/** The row of a settled trace; none for requests made without an API key. */
function rowOf(trace: RequestTrace): RequestLogRow | undefined {
  const ending = trace.ending;
  if (!ending?.key) return undefined;
  const { key } = ending;
  const resolution = trace.resolution;
  return {
    id: trace.id,
    created: trace.created,
    account: trace.payer ?? payerOf(key, false),
    keyId: key.id,
    userId: key.userId,
    orgId: key.orgId,
    endpoint: ending.endpoint,
    model: resolution?.requested.id ?? ending.bodyModel ?? null,
    servedModel: resolution?.served.id ?? null,
    provider: resolution?.served.provider ?? null,
    channel: null,
    attempts: 1,
    stream: trace.stream,
    status: ending.status,
    errorType: trace.errorType,
    inputTokens: trace.inputTokens,
    outputTokens: trace.outputTokens,
    cacheReadTokens: trace.cacheReadTokens,
    cacheWriteTokens: trace.cacheWriteTokens,
    cost: trace.cost,
    latencyMs: ending.latencyMs,
    ttftMs: trace.ttftMs,
    taskId: trace.taskId,
  };
}
