import type { Logger } from 'pino';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import type { MediaFile } from '../../providers/openai/openai-media.ts';
import type { ProviderRegistry } from '../../providers/registry.ts';
import { UpstreamRoute } from '../../providers/channels/upstream-route.ts';
import { UpstreamError, vendorMessage } from '../../providers/upstream-error.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import { priceSeconds } from '../billing/pricing.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import { generateMedia, type GenerationStep } from './media-generation.ts';
import { isFinished, type Task, type TaskError, type TaskFile, type TasksRepository } from './task.ts';
import type { TaskCompletions } from './task-completions.ts';
import { transcribeTask } from './transcription-task.ts';
import { dayOf, type CostAdjustment } from '../usage/request-log.ts';
import type { RequestLog } from '../usage/request-log-writer.ts';

/** Vendor failures worth another try get this many attempts in all. */
const MAX_ATTEMPTS = 3;
/** How often a running video generation is polled. */
const POLL_MS = 2_000;
const MAX_POLLS = 900;

export interface TaskWorkerDependencies {
  repository: TasksRepository;
  providers: ProviderRegistry;
  catalog: CatalogService;
  book: BalanceBook;
  clock: Clock;
  logger: Logger;
  /** Told when a task is settled, so a request waiting for it (POST /v1/media/generate) answers at once. */
  completions?: TaskCompletions;
  /** When on, refunds and corrections move the usage of the request that created the task (in their own transaction). */
  requestLog?: Pick<RequestLog, 'enabled' | 'rowsKeptFrom'>;
}

/**
 * Runs the `task.run` job: idle → processing → done (files stored, webhook queued) or failed (charge refunded as its own
 * ledger entry, webhook queued). Vendor errors that may pass are retried with back-off before the task fails.
 */
export class TaskWorker {
  constructor(private readonly dependencies: TaskWorkerDependencies) {}

  readonly run = async (job: Job): Promise<JobOutcome> => {
    const { repository, clock } = this.dependencies;
    const task = await repository.get(job.subjectId);
    if (!task || isFinished(task)) return { type: 'done' };
    const model = this.dependencies.catalog.get(task.servedModel);
    if (!model) return this.fail(task, { code: 'model_unavailable', message: `The model '${task.servedModel}' is no longer in the catalog.` });
    if (task.status === 'idle') await repository.update(task.id, { status: 'processing', percent: 10 }, clock.now());

    let step: GenerationStep;
    try {
      const media = this.dependencies.providers.media(model.provider);
      const call = { requestId: job.id, route: new UpstreamRoute(model.id) };
      step = task.kind === 'transcription' ? await transcribeTask(media, repository, task, model, call) : await generateMedia(media, task, model, call);
    } catch (error) {
      const retryable = !(error instanceof UpstreamError) || error.retryable;
      if (retryable && job.attempts + 1 < MAX_ATTEMPTS) {
        return { type: 'retry', at: clock.now() + 2_000 * 2 ** job.attempts, error: error instanceof Error ? error.message : String(error) };
      }
      const message = error instanceof UpstreamError ? (vendorMessage(error.body) ?? error.message) : error instanceof Error ? error.message : String(error);
      this.dependencies.logger.warn({ task: task.id, err: error }, 'task failed at the vendor');
      return this.fail(task, { code: 'generation_failed', message });
    }

    if (step.type === 'failed') return this.fail(task, step.error);
    if (step.type === 'waiting') {
      const polls = (task.result?.polls ?? 0) + 1;
      if (polls > MAX_POLLS) return this.fail(task, { code: 'timeout', message: 'The vendor did not finish in time.' });
      await repository.update(task.id, { percent: step.percent, result: { files: [], vendorId: step.vendorId, polls, ...(step.channel ? { vendorChannel: step.channel } : {}) } }, clock.now());
      return { type: 'wait', at: clock.now() + POLL_MS, reason: 'waiting for the vendor' };
    }
    const files = await this.store(task, step.files);
    const now = clock.now();
    const correction = this.correction(task, step.seconds, now);
    await repository.settle(
      task.id,
      { status: 'done', percent: 100, result: { files, ...(step.text !== undefined ? { text: step.text } : {}) }, error: null, ...(correction ? { cost: correction.cost } : {}) },
      { ...(task.webhookUrl ? { webhookAt: now } : {}), ...(correction ? this.refunding(task, correction.entry, now) : {}) },
      now,
    );
    if (correction) this.dependencies.book.invalidate(task.payer);
    this.dependencies.completions?.finished(task.id);
    return { type: 'done' };
  };

  /**
   * An asynchronous transcription is charged at creation from the file's own length; when the vendor reports the audio's
   * duration, the charge is corrected to it (a refund or a further charge, as its own ledger entry).
   */
  private correction(task: Task, seconds: number | undefined, now: number): { cost: bigint; entry: LedgerEntry } | undefined {
    if (task.kind !== 'transcription' || seconds === undefined) return undefined;
    const billed = this.dependencies.catalog.get(task.model);
    if (!billed) return undefined;
    const cost = priceSeconds(billed, seconds).total;
    const difference = task.cost - cost;
    if (difference === 0n) return undefined;
    return {
      cost,
      entry: {
        id: newId('ledger'),
        account: task.payer,
        amount: difference,
        kind: difference > 0n ? 'refund' : 'charge',
        requestId: task.id,
        keyId: task.keyId,
        model: task.model,
        description: `transcription charge corrected to the vendor's ${seconds} s`,
        createdAt: now,
      },
    };
  }

  /**
   * A refund or correction, and (request log on) the move of the usage of the request that created the task (its day, model,
   * key, endpoint), so /usage keeps equal to the ledger; the request's log row keeps what was charged then. Both are written
   * in the task's settling transaction, keyed by the ledger entry, so the move is neither lost nor counted twice.
   */
  private refunding(task: Task, entry: LedgerEntry, now: number): { refund: LedgerEntry; usage?: CostAdjustment } {
    const log = this.dependencies.requestLog;
    if (!log?.enabled) return { refund: entry };
    const fallback = { account: task.payer, day: dayOf(now), model: task.model, keyId: task.keyId, userId: task.userId, endpoint: `task.${task.kind}` };
    return { refund: entry, usage: { id: entry.id, taskId: task.id, cost: -entry.amount, at: now, requestAt: task.createdAt, rowsKeptFrom: log.rowsKeptFrom(now), fallback } };
  }

  private async store(task: Task, files: MediaFile[]): Promise<TaskFile[]> {
    const { repository, clock } = this.dependencies;
    const stored: TaskFile[] = [];
    for (const file of files) {
      const id = `file_${randomBase62(24)}`;
      await repository.saveFile({ id, taskId: task.id, contentType: file.contentType, data: file.data }, clock.now());
      stored.push({ id, contentType: file.contentType });
    }
    return stored;
  }

  /** Fails the task, refunds its charge exactly (a ledger entry of its own) and queues its webhook — in one transaction. */
  private async fail(task: Task, error: TaskError): Promise<JobOutcome> {
    const { repository, clock, book } = this.dependencies;
    const now = clock.now();
    const refund =
      task.cost > 0n
        ? { id: newId('ledger'), account: task.payer, amount: task.cost, kind: 'refund' as const, requestId: task.id, keyId: task.keyId, model: task.model, description: `refund of failed task ${task.type}`, createdAt: now }
        : undefined;
    await repository.settle(task.id, { status: 'failed', error }, { ...(refund ? this.refunding(task, refund, now) : {}), ...(task.webhookUrl ? { webhookAt: now } : {}) }, now);
    book.invalidate(task.payer);
    this.dependencies.completions?.finished(task.id);
    return { type: 'done' };
  }
}
