import type { Logger } from 'pino';
import { BatchedWriter, type WriterHealth } from '../../lib/batched-writer.ts';
import type { Clock } from '../../lib/clock.ts';
import { ReleasingMap } from '../../lib/releasing-map.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import { payerOf } from '../inference/model-call.ts';
import { RequestTrace } from './request-trace.ts';
import type { RequestLogRepository, RequestLogRow } from './request-log.ts';

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
export type RequestLogHealth = WriterHealth;

/**
 * The request log's writer. Each request gets a trace (`begin`); a settled trace becomes a row in a queue, written in
 * batches off the request path with the rollups it moves (one transaction) by the ledger's kind of writer (BatchedWriter):
 * a failed batch stays queued and is retried with back-off; `close` flushes. The ledger's charges reach the
 * trace of their request through `charged`, so a row's cost is exactly what the ledger booked for it. A task's later
 * refund or correction does not pass through here: it moves the rollups in its own transaction (CostAdjustment).
 */
export class RequestLog {
  /** Traces of the requests still open, by request id; a settled trace is let go at once (see ReleasingMap). */
  private readonly open = new ReleasingMap<string, RequestTrace>();
  private readonly writer: BatchedWriter<RequestLogRow>;
  private closed = false;
  private maintainedAt = Number.NEGATIVE_INFINITY;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly repository: RequestLogRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: RequestLogOptions,
  ) {
    this.writer = new BatchedWriter<RequestLogRow>({
      name: 'request log',
      itemsLabel: 'rows',
      flushMs: options.flushMs,
      clock,
      logger,
      // Rows keep their ids and the write skips ids already written, so a batch whose commit went through unacknowledged
      // is not counted twice in the rollups when written again (nor are the waiting adjustments it applied: they are gone).
      write: (batch) => this.repository.append(batch),
      afterTimedFlush: () => this.maintain(),
    });
  }

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

  /** Whether rows and rollups are written (TOLLGATE_REQUEST_LOG); task refunds move the rollups only then. */
  get enabled(): boolean {
    return this.options.enabled;
  }

  /** The retention cutoff at `now`: rows of requests made before it are gone (or about to go). */
  rowsKeptFrom(now: number): number {
    return now - this.options.retentionDays * DAY_MS;
  }

  private readonly settled = (trace: RequestTrace): void => {
    this.open.delete(trace.id);
    const row = this.options.enabled && !this.closed ? rowOf(trace) : undefined;
    if (row) this.writer.push(row);
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

  flush(): Promise<void> {
    return this.writer.flush();
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
    return this.writer.health();
  }

  /** Writes what is queued (tried for `patienceMs` while writes fail), then stops accepting rows. */
  async close(patienceMs = 20_000): Promise<void> {
    if (!(await this.writer.close(patienceMs))) this.logger.error({ rows: this.writer.queued.length }, 'request log rows could not be written at shutdown');
    this.closed = true;
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
    provider: trace.route?.provider ?? resolution?.served.provider ?? null,
    channel: trace.route?.channel ?? null,
    attempts: trace.route?.attempts ?? 0,
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
