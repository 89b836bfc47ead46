import type { Logger } from 'pino';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import { unixSeconds, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { OutboundTimeoutError, RefusedUrlError, sendOutbound } from '../../lib/outbound-http.ts';
import type { TasksRepository } from '../tasks/task.ts';
import { taskView, type FileUrl } from '../tasks/task-views.ts';
import { signatureHeader } from './signature.ts';

/** SPEC 6.2: after a failed delivery, retries about 5 s, 20 s, 60 s and 180 s later; then the delivery is marked failed. */
export const RETRY_DELAYS_MS = [5_000, 20_000, 60_000, 180_000] as const;

/** A receiver's answer is read up to this many bytes (only its status matters). */
const RECEIVER_ANSWER_BYTES = 64 * 1024;

export interface WebhookDispatcherOptions {
  allowPrivateUrls: boolean;
  /** A receiver that does not answer within this time has failed the attempt. */
  timeoutMs: number;
  fileUrl: FileUrl;
}

/**
 * Runs the `webhook.task` job: POSTs the finished task to its `webhook_url`, signed with the API key that created it.
 * Every attempt is recorded (admin API: GET /deliveries?taskId=); `X-Tollgate-Delivery` stays the task id on every
 * attempt while the signature is made afresh. The sealed key is erased once the task is delivered, or the receiver answered
 * 410 Gone; a delivery that failed for good keeps it so the operator may retry it (deliveries-service.ts), and attempts of
 * such a retry number on from the earlier ones.
 */
export class WebhookDispatcher {
  constructor(
    private readonly repository: TasksRepository,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: WebhookDispatcherOptions,
  ) {}

  readonly deliver = async (job: Job): Promise<JobOutcome> => {
    const task = await this.repository.get(job.subjectId);
    if (!task?.webhookUrl || (task.status !== 'done' && task.status !== 'failed')) return { type: 'done' };
    const secret = task.webhookSecret ? this.secrets.open(task.webhookSecret) : undefined;
    if (!secret) return { type: 'failed', error: 'the signing key of this task is not available' };
    // Numbered on from every earlier attempt (an operator's retry starts a new job, with the same schedule of retries).
    const attempt = (await this.repository.deliveries(task.id)).length + 1;
    const event = task.status === 'done' ? 'task.done' : 'task.failed';
    const body = JSON.stringify(taskView(task, this.options.fileUrl));
    const started = this.clock.now();
    const result = await this.post(task.webhookUrl, body, task.id, event, secret);
    await this.repository.recordDelivery({
      id: newId('delivery'),
      taskId: task.id,
      attempt,
      url: task.webhookUrl,
      event,
      status: result.ok ? 'delivered' : 'failed',
      httpStatus: result.status,
      error: result.error,
      durationMs: Math.max(0, this.clock.now() - started),
      at: started,
    });
    const delay = RETRY_DELAYS_MS[job.attempts];
    // A receiver answering 410 Gone asks for no more deliveries (Standard Webhooks).
    const gone = result.status === 410;
    if (result.ok || delay === undefined || gone) {
      if (result.ok || gone) await this.repository.update(task.id, { webhookSecret: null }, this.clock.now());
      if (!result.ok) this.logger.warn({ task: task.id, attempts: attempt }, 'webhook delivery failed for good');
      return result.ok ? { type: 'done' } : { type: 'failed', error: result.error ?? `receiver answered ${result.status}` };
    }
    return { type: 'retry', at: this.clock.now() + delay, error: result.error ?? `receiver answered ${result.status}` };
  };

  private async post(url: string, body: string, taskId: string, event: string, secret: string): Promise<{ ok: boolean; status: number | null; error: string | null }> {
    try {
      const response = await sendOutbound(
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'user-agent': 'Tollgate-Webhooks/1',
            'x-tollgate-event': event,
            'x-tollgate-delivery': taskId,
            'x-tollgate-signature': signatureHeader(body, secret, unixSeconds(this.clock)),
          },
          body,
        },
        { allowPrivateUrls: this.options.allowPrivateUrls, timeoutMs: this.options.timeoutMs, maxResponseBytes: RECEIVER_ANSWER_BYTES },
      );
      const ok = response.status >= 200 && response.status < 300;
      return { ok, status: response.status, error: ok ? null : `receiver answered ${response.status}` };
    } catch (error) {
      if (error instanceof RefusedUrlError) return { ok: false, status: null, error: `webhook_url ${error.reason}` };
      if (error instanceof OutboundTimeoutError) return { ok: false, status: null, error: `receiver did not answer within ${this.options.timeoutMs} ms` };
      return { ok: false, status: null, error: `delivery failed: ${error instanceof Error ? error.message : String(error)}` };
    }
  }
}
