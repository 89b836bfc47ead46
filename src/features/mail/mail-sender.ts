import type { Logger } from 'pino';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import type { Clock } from '../../lib/clock.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { MailIdentity } from './mail-outbox.ts';
import type { MailOutboxRepository, MailTransport } from './mail.ts';

/** The job kind of a queued message. */
export const MAIL_JOB = 'mail.send';
/** After a failed attempt the next waits this long, doubling up to the cap: a mail server away for hours gets mail within 15 min of its return. */
const RETRY_FIRST_MS = 5_000;
const RETRY_CAP_MS = 15 * 60_000;
/** A message that could not be handed over for this long is marked failed (its links have long expired by then). */
const GIVE_UP_AFTER_MS = 3 * 24 * 3_600_000;
/** Without a mail server configured, queued messages wait for one to be configured. */
const NO_SERVER_WAIT_MS = 10 * 60_000;

/** The delay before attempt `attempts + 1` after `attempts` failures: 5 s, 10 s, 20 s, … capped at 15 min. */
export const retryDelayMs = (attempts: number): number => Math.min(RETRY_FIRST_MS * 2 ** Math.min(attempts, 20), RETRY_CAP_MS);

/**
 * Runs the `mail.send` job: hands one queued message to the mail server. A server that is down or refuses delays the
 * message (retried with capped back-off), never loses it. The message is marked sent as soon as the server took it, so a
 * job re-run after that finds nothing to do; a crash between the two sends it again with the same Message-ID.
 */
export class MailSender {
  constructor(
    private readonly repository: MailOutboxRepository,
    private readonly transport: MailTransport | undefined,
    private readonly identity: MailIdentity,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  readonly deliver = async (job: Job): Promise<JobOutcome> => {
    const mail = await this.repository.get(job.subjectId);
    if (!mail || mail.status !== 'pending') return { type: 'done' };
    if (!this.transport) return { type: 'wait', at: this.clock.now() + NO_SERVER_WAIT_MS, reason: 'no mail server configured' };
    const text = this.secrets.open(mail.text);
    const html = this.secrets.open(mail.html);
    if (text === undefined || html === undefined) {
      const error = 'the message was sealed under a master key this gateway no longer has';
      await this.repository.settle(mail.id, { status: 'failed', error }, this.clock.now());
      return { type: 'failed', error };
    }
    try {
      await this.transport.send({ from: this.identity.from, to: mail.to, subject: mail.subject, text, html, messageId: mail.messageId });
    } catch (caught) {
      const error = caught instanceof Error ? caught.message : String(caught);
      const now = this.clock.now();
      if (now - mail.createdAt >= GIVE_UP_AFTER_MS) {
        this.logger.error({ mail: mail.id, kind: mail.kind, error }, 'mail could not be sent for days; giving up on it');
        await this.repository.settle(mail.id, { status: 'failed', error }, now);
        return { type: 'failed', error };
      }
      this.logger.warn({ mail: mail.id, kind: mail.kind, attempt: job.attempts + 1, error }, 'mail server did not take the message; will retry');
      await this.repository.settle(mail.id, { status: 'pending', error }, now);
      return { type: 'retry', at: now + retryDelayMs(job.attempts), error };
    }
    await this.repository.settle(mail.id, { status: 'sent', error: null }, this.clock.now());
    return { type: 'done' };
  };
}
