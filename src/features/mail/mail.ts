/** A message as the templates render it: plain text first, a simple HTML alternative beside it. */
export interface MailContent {
  subject: string;
  text: string;
  html: string;
}

/** What a message is about (metrics, logs, tests); one per template. */
export type MailKind = 'password_reset' | 'email_change' | 'email_changed' | 'invitation' | 'low_balance' | 'key_limit' | 'auto_recharge_failed';

export interface NewMail extends MailContent {
  kind: MailKind;
  to: string;
  /** An alert noticed by several processes is queued once: a second message with the same key is dropped. */
  dedupeKey?: string;
}

export type MailStatus = 'pending' | 'sent' | 'failed';

/** A queued message as its job finds it; `text` and `html` are sealed under the master key at rest (they hold live links). */
export interface QueuedMail extends MailContent {
  id: string;
  kind: MailKind;
  to: string;
  /** `<id@host>`, fixed when queued: a message sent again after a crash carries the same one, so receivers can drop it. */
  messageId: string;
  status: MailStatus;
  attempts: number;
  createdAt: number;
}

/** The mail outbox: messages and their `mail.send` jobs (storage/mail-outbox-repository.ts). */
export interface MailOutboxRepository {
  /**
   * Queues the message and its job; with `transaction`, both commit with their cause. False when a message with the same
   * dedupe key was queued before (nothing is added).
   */
  enqueue(mail: NewMail & { id: string; messageId: string }, now: number, transaction?: unknown): Promise<boolean>;
  get(id: string): Promise<QueuedMail | undefined>;
  /** Notes an attempt's outcome: `sent` (with the time), `failed` for good, or still `pending` with the error. */
  settle(id: string, outcome: { status: MailStatus; error: string | null }, now: number): Promise<void>;
  /** Messages waiting to be sent and given up on, for /metrics. */
  counts(): Promise<Record<'pending' | 'failed', number>>;
  /** Emails of an org's owners (low-balance alerts), read in the ledger write's transaction. */
  ownerEmails(orgId: string, transaction?: unknown): Promise<string[]>;
  userEmail(userId: string, transaction?: unknown): Promise<string | null>;
  orgName(orgId: string, transaction?: unknown): Promise<string | undefined>;
}

/** Hands a message to the mail server; rejects when it did not take it (down, refused). */
export interface MailTransport {
  send(message: { from: string; to: string; subject: string; text: string; html: string; messageId: string }): Promise<void>;
  close(): void;
}
