import type { Logger } from 'pino';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { RefusedUrlError, sendOutbound } from '../../lib/outbound-http.ts';
import { RETRY_DELAYS_MS } from '../webhooks/webhook-dispatcher.ts';
import type { BotsRepository } from './bot.ts';

/** After the task-webhook schedule (5 s, 20 s, 60 s, 180 s), a chat service that is still down is tried every 10 minutes… */
const LATER_DELAY_MS = 600_000;
/** …up to this many attempts (about 3.5 hours), then the message is marked failed and the queue moves on. */
const MAX_ATTEMPTS = 24;
/** How long a worker's claim on the head of a queue lasts. */
const CLAIM_MS = 60_000;

/**
 * The `bot.deliver` job: sends a bot's outbound events (BOT_MESSAGE, INVITE_AGENT) to the chat service's webhook, one at
 * a time and in order. A failed head is retried with back-off and holds the messages behind it, so a chat service that is
 * down gets every reply, in order, once, when it is back.
 */
export class BotOutboxDispatcher {
  constructor(
    private readonly bots: BotsRepository,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: { allowPrivateUrls: boolean; timeoutMs: number },
  ) {}

  readonly deliver = async (job: Job): Promise<JobOutcome> => {
    const bot = await this.bots.get(job.subjectId);
    if (!bot) return { type: 'done' };
    const token = this.secrets.open(bot.tokenSealed);
    for (;;) {
      const now = this.clock.now();
      const head = await this.bots.claimHead(bot.id, now, CLAIM_MS);
      if (!head) return { type: 'done' };
      if ('waitUntil' in head) return { type: 'wait', at: head.waitUntil, reason: 'waiting to retry the head of the queue' };
      const failure = !bot.webhookUrl || !token ? 'the bot has no webhook URL configured' : await this.post(bot.webhookUrl, token, head.payload);
      if (failure === undefined) {
        await this.bots.markOutbound(head.id, { status: 'delivered', error: null }, this.clock.now());
        continue;
      }
      const attempt = head.attempts + 1;
      if (attempt >= MAX_ATTEMPTS) {
        this.logger.error({ bot: bot.id, error: failure }, 'bot message could not be delivered; giving up on it');
        await this.bots.markOutbound(head.id, { status: 'failed', error: failure }, this.clock.now());
        continue;
      }
      const nextAttemptAt = this.clock.now() + (RETRY_DELAYS_MS[attempt - 1] ?? LATER_DELAY_MS);
      await this.bots.markOutbound(head.id, { status: 'pending', error: failure, nextAttemptAt }, this.clock.now());
      return { type: 'retry', at: nextAttemptAt, error: failure };
    }
  };

  /** Undefined when the chat service took the event (2xx), else why not. */
  private async post(url: string, token: string, body: string): Promise<string | undefined> {
    try {
      const response = await sendOutbound(
        url,
        { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body },
        { allowPrivateUrls: this.options.allowPrivateUrls, timeoutMs: this.options.timeoutMs, maxResponseBytes: 64 * 1024 },
      );
      return response.status >= 200 && response.status < 300 ? undefined : `chat service answered ${response.status}`;
    } catch (error) {
      if (error instanceof RefusedUrlError) return `webhook URL ${error.reason}`;
      return `delivery failed: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
}
