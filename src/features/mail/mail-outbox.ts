import type { Logger } from 'pino';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import type { MailOutboxRepository, NewMail } from './mail.ts';

/** Where the outbox sends from: the From header, and the host of every Message-ID. */
export interface MailIdentity {
  from: string;
  /** `example.com` of `Tollgate <no-reply@example.com>`. */
  host: string;
}

/** The host part of a From address (`Name <user@host>` or `user@host`), for Message-IDs. */
export function mailHost(from: string): string {
  const match = /@([^>\s]+)>?\s*$/.exec(from);
  return match?.[1] ?? 'localhost';
}

/**
 * Queues mail as durable jobs: a message is written with its `mail.send` job (inside the caller's transaction when one is
 * given) and sent later by the job runner, never on the request path. With no SMTP server configured, nothing is queued:
 * the console shows invitation links and operators hand out reset links instead (DESIGN §15).
 */
export class MailOutbox {
  constructor(
    private readonly repository: MailOutboxRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly secrets: SecretBox,
    readonly identity: MailIdentity,
    /** Whether a mail server is configured (TOLLGATE_SMTP_URL). */
    readonly enabled: boolean,
  ) {}

  /** Queues a message; false when mail is off or the same alert (dedupe key) was queued before. */
  async queue(mail: NewMail, transaction?: unknown): Promise<boolean> {
    if (!this.enabled) {
      this.logger.debug({ kind: mail.kind }, 'no mail server configured: message not queued');
      return false;
    }
    const id = newId('mail');
    // The bodies hold links that act as passwords until they expire: sealed at rest like every other secret (DESIGN §14).
    const sealed = { ...mail, text: this.secrets.seal(mail.text), html: this.secrets.seal(mail.html) };
    return this.repository.enqueue({ ...sealed, id, messageId: `<${id}@${this.identity.host}>` }, this.clock.now(), transaction);
  }

  counts(): Promise<Record<'pending' | 'failed', number>> {
    return this.repository.counts();
  }

  userEmail(userId: string, transaction?: unknown): Promise<string | null> {
    return this.repository.userEmail(userId, transaction);
  }

  ownerEmails(orgId: string, transaction?: unknown): Promise<string[]> {
    return this.repository.ownerEmails(orgId, transaction);
  }

  async orgName(orgId: string, transaction?: unknown): Promise<string> {
    return (await this.repository.orgName(orgId, transaction)) ?? orgId;
  }
}
