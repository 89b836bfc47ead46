import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.ts';
import { randomBase62 } from '../lib/ids.ts';
import type { Job, JobHandler, JobOutcome, JobQueue } from './jobs.ts';

export interface JobRunnerOptions {
  /** How often the loop looks for due jobs. */
  pollMs: number;
  /** How long a leased job stays this worker's before another may take it. */
  leaseMs: number;
  /** Jobs run at once by this worker. */
  concurrency: number;
}

/**
 * Runs due jobs. `runDue()` does one pass (tests call it after moving the clock); `start()` polls in the background.
 * Each job is leased, handled, and finished with the handler's outcome; a handler that throws is retried later.
 */
export class JobRunner {
  readonly worker = `w_${randomBase62(10)}`;
  private readonly handlers = new Map<string, JobHandler>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = true;
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly jobs: JobQueue,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: JobRunnerOptions,
  ) {}

  handle(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
  }

  /** Runs every job due now (in batches of `concurrency`); resolves with how many ran. */
  async runDue(): Promise<number> {
    while (this.running) await this.running;
    this.running = this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const leased = await this.jobs.lease(this.worker, this.clock.now(), this.options.leaseMs, this.options.concurrency);
      if (leased.length === 0) return total;
      total += leased.length;
      await Promise.all(leased.map((job) => this.run(job)));
    }
  }

  private async run(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind);
    let outcome: JobOutcome;
    if (!handler) {
      outcome = { type: 'failed', error: `no handler for job kind ${job.kind}` };
    } else {
      try {
        outcome = await handler(job);
      } catch (error) {
        this.logger.error({ err: error, job: job.id, kind: job.kind }, 'job failed unexpectedly; will retry');
        outcome = { type: 'retry', at: this.clock.now() + 30_000, error: error instanceof Error ? error.message : String(error) };
      }
    }
    const finished = await this.jobs.finish(job, this.worker, outcome, this.clock.now());
    if (!finished) this.logger.warn({ job: job.id }, 'job lease was lost before it finished');
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = (): void => {
      if (this.stopped) return;
      const pass = this.runDue()
        .catch((error: unknown) => {
          this.logger.error({ err: error }, 'job pass failed');
          return 0;
        })
        .then(() => undefined);
      this.active.add(pass);
      void pass.finally(() => {
        this.active.delete(pass);
        if (!this.stopped) this.timer = setTimeout(tick, this.options.pollMs);
      });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling and waits for the jobs under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await Promise.all([...this.active]);
  }
}
