import { sql, type Kysely, type Transaction } from 'kysely';
import { MAIL_JOB } from '../features/mail/mail-sender.ts';
import type { MailKind, MailOutboxRepository, MailStatus, NewMail, QueuedMail } from '../features/mail/mail.ts';
import type { SqlJobsRepository } from './jobs-repository.ts';
import type { Database } from './schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/** The mail outbox table; each message commits with its `mail.send` job. */
export class SqlMailOutboxRepository implements MailOutboxRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: SqlJobsRepository,
  ) {}

  private executor(transaction: unknown): Executor {
    return (transaction as Transaction<Database> | undefined) ?? this.db;
  }

  async enqueue(mail: NewMail & { id: string; messageId: string }, now: number, transaction?: unknown): Promise<boolean> {
    const write = async (trx: Executor): Promise<boolean> => {
      const inserted = await trx
        .insertInto('mail_outbox')
        .values({
          id: mail.id,
          kind: mail.kind,
          to_address: mail.to,
          subject: mail.subject,
          text_body: mail.text,
          html_body: mail.html,
          message_id: mail.messageId,
          dedupe_key: mail.dedupeKey ?? null,
          status: 'pending',
          attempts: 0,
          last_error: null,
          created_at: now,
          sent_at: null,
        })
        .onConflict((conflict) => conflict.column('dedupe_key').doNothing())
        .returning('id')
        .executeTakeFirst();
      if (!inserted) return false;
      await this.jobs.enqueue(trx, { kind: MAIL_JOB, subjectId: mail.id, runAt: now }, now);
      return true;
    };
    return transaction ? write(this.executor(transaction)) : this.db.transaction().execute(write);
  }

  async get(id: string): Promise<QueuedMail | undefined> {
    const row = await this.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirst();
    return (
      row && {
        id: row.id,
        kind: row.kind as MailKind,
        to: row.to_address,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        messageId: row.message_id,
        status: row.status,
        attempts: row.attempts,
        createdAt: Number(row.created_at),
      }
    );
  }

  async settle(id: string, outcome: { status: MailStatus; error: string | null }, now: number): Promise<void> {
    await this.db
      .updateTable('mail_outbox')
      .set({
        status: outcome.status,
        attempts: sql`attempts + 1`,
        last_error: outcome.error,
        // A sent message's body (its links are credentials until they expire) is not kept.
        ...(outcome.status === 'sent' ? { sent_at: now, text_body: '', html_body: '' } : {}),
      })
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .execute();
  }

  async counts(): Promise<Record<'pending' | 'failed', number>> {
    // Sent messages are not counted: they only grow, and /metrics would scan them all.
    const rows = await this.db
      .selectFrom('mail_outbox')
      .select(['status', sql<number | string>`count(*)`.as('count')])
      .where('status', 'in', ['pending', 'failed'])
      .groupBy('status')
      .execute();
    const counts = { pending: 0, failed: 0 };
    for (const row of rows) if (row.status !== 'sent') counts[row.status] = Number(row.count);
    return counts;
  }

  async ownerEmails(orgId: string, transaction?: unknown): Promise<string[]> {
    const rows = await this.executor(transaction)
      .selectFrom('org_members')
      .innerJoin('users', 'users.id', 'org_members.user_id')
      .select('users.email')
      .where('org_members.org_id', '=', orgId)
      .where('org_members.role', '=', 'owner')
      .where('users.email', 'is not', null)
      .orderBy('users.id')
      .execute();
    return rows.map((row) => row.email!);
  }

  async userEmail(userId: string, transaction?: unknown): Promise<string | null> {
    const row = await this.executor(transaction).selectFrom('users').select('email').where('id', '=', userId).executeTakeFirst();
    return row?.email ?? null;
  }

  async orgName(orgId: string, transaction?: unknown): Promise<string | undefined> {
    const row = await this.executor(transaction).selectFrom('orgs').select('name').where('id', '=', orgId).executeTakeFirst();
    return row?.name;
  }
}
