import { sql, type Kysely, type Selectable } from 'kysely';
import type { AcceptedEventInput, Bot, BotDialog, BotFilter, BotsRepository, DialogState, OutboundOutcome } from '../features/chatbot/bot.ts';
import { newId } from '../lib/ids.ts';
import type { SqlJobsRepository } from './jobs-repository.ts';
import { containsText } from './list-pages.ts';
import type { BotDialogsTable, BotsTable, Database } from './schema.ts';

const toBot = (row: Selectable<BotsTable>): Bot => ({
  id: row.id,
  name: row.name,
  userId: row.user_id,
  orgId: row.org_id,
  assistantId: row.assistant_id,
  tokenSealed: row.token_sealed,
  webhookUrl: row.webhook_url,
  createdAt: row.created_at,
});

const toDialog = (row: Selectable<BotDialogsTable>): BotDialog => ({
  id: row.id,
  botId: row.bot_id,
  chatId: row.chat_id,
  clientId: row.client_id,
  state: row.state,
});

/** Bots, dialogs, the inbound event log and the outbound queue. */
export class SqlBotsRepository implements BotsRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly jobs: SqlJobsRepository,
  ) {}

  async insert(bot: Bot, tokenHash: string): Promise<void> {
    await this.db
      .insertInto('bots')
      .values({ id: bot.id, user_id: bot.userId, org_id: bot.orgId, assistant_id: bot.assistantId, token_hash: tokenHash, token_sealed: bot.tokenSealed, webhook_url: bot.webhookUrl, created_at: bot.createdAt, name: bot.name })
      .execute();
  }

  async byTokenHash(hash: string): Promise<Bot | undefined> {
    const row = await this.db.selectFrom('bots').selectAll().where('token_hash', '=', hash).where('revoked_at', 'is', null).executeTakeFirst();
    return row && toBot(row);
  }

  async get(id: string): Promise<Bot | undefined> {
    const row = await this.db.selectFrom('bots').selectAll().where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return row && toBot(row);
  }

  async list(owner: { userId: string } | { orgId: string }, limit: number, after: string | undefined): Promise<Bot[]> {
    let select = this.db.selectFrom('bots').selectAll().where('revoked_at', 'is', null);
    select = 'userId' in owner ? select.where('user_id', '=', owner.userId) : select.where('org_id', '=', owner.orgId);
    if (after !== undefined) select = select.where('id', '<', after);
    const rows = await select.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toBot);
  }

  async search(filter: BotFilter, limit: number, after: string | undefined): Promise<Bot[]> {
    let select = this.db.selectFrom('bots').selectAll().where('revoked_at', 'is', null);
    if (filter.userId !== undefined) select = select.where('user_id', '=', filter.userId);
    if (filter.orgId !== undefined) select = select.where('org_id', '=', filter.orgId);
    if (filter.query !== undefined) select = select.where((eb) => eb.or([containsText('name', filter.query!), containsText('id', filter.query!)]));
    if (after !== undefined) select = select.where('id', '<', after);
    const rows = await select.orderBy('id', 'desc').limit(limit).execute();
    return rows.map(toBot);
  }

  async update(id: string, changes: { name?: string; assistantId?: string; webhookUrl?: string | null }): Promise<void> {
    const values: { name?: string; assistant_id?: string; webhook_url?: string | null } = {};
    if (changes.name !== undefined) values.name = changes.name;
    if (changes.assistantId !== undefined) values.assistant_id = changes.assistantId;
    if (changes.webhookUrl !== undefined) values.webhook_url = changes.webhookUrl;
    if (Object.keys(values).length > 0) await this.db.updateTable('bots').set(values).where('id', '=', id).where('revoked_at', 'is', null).execute();
  }

  async revoke(id: string, now: number): Promise<boolean> {
    const result = await this.db.updateTable('bots').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async revokeMemberBots(orgId: string, userId: string, now: number): Promise<string[]> {
    const rows = await this.db.selectFrom('bots').select('id').where('org_id', '=', orgId).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
    for (const row of rows) await this.revoke(row.id, now);
    return rows.map((row) => row.id);
  }

  async setWebhook(id: string, url: string): Promise<void> {
    await this.db.updateTable('bots').set({ webhook_url: url }).where('id', '=', id).execute();
  }

  /** The open dialog of a chat (not closed), if any. */
  async openDialog(botId: string, chatId: string): Promise<BotDialog | undefined> {
    const row = await this.db
      .selectFrom('bot_dialogs')
      .selectAll()
      .where('bot_id', '=', botId)
      .where('chat_id', '=', chatId)
      .where('state', '!=', 'closed')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && toDialog(row);
  }

  async dialog(id: string): Promise<BotDialog | undefined> {
    const row = await this.db.selectFrom('bot_dialogs').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toDialog(row);
  }

  async setState(dialogId: string, state: DialogState, now: number): Promise<void> {
    await this.db.updateTable('bot_dialogs').set({ state, updated_at: now }).where('id', '=', dialogId).execute();
  }

  /**
   * Records an inbound event once (by the chat service's id), opening a dialog for a chat that has none, and queues the
   * reply job for a client message — one transaction. Returns undefined for a repeat.
   */
  async acceptEvent(
    bot: Bot,
    event: AcceptedEventInput,
    options: { openDialog: boolean; replyJob: boolean },
    now: number,
  ): Promise<{ eventRowId: string; dialog: BotDialog | undefined } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const id = newId('job');
      const inserted = await trx
        .insertInto('bot_events')
        .values({ id, bot_id: bot.id, event_id: event.eventId, event: event.event, dialog_id: null, payload: event.payload, created_at: now })
        .onConflict((conflict) => conflict.columns(['bot_id', 'event_id']).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) return undefined;
      let row = await trx
        .selectFrom('bot_dialogs')
        .selectAll()
        .where('bot_id', '=', bot.id)
        .where('chat_id', '=', event.chatId)
        .where('state', '!=', 'closed')
        .orderBy('created_at', 'desc')
        .executeTakeFirst();
      if (!row && options.openDialog) {
        row = { id: newId('bot'), bot_id: bot.id, chat_id: event.chatId, client_id: event.clientId, state: 'bot', created_at: now, updated_at: now };
        await trx.insertInto('bot_dialogs').values(row).execute();
      }
      if (row) await trx.updateTable('bot_events').set({ dialog_id: row.id }).where('id', '=', id).execute();
      // One chat's replies are worked on one at a time, in the order the messages came (each sees the ones before).
      if (options.replyJob) await this.jobs.enqueue(trx, { kind: 'bot.reply', subjectId: id, runAt: now, queueKey: `bot:${bot.id}:${event.chatId}` }, now);
      return { eventRowId: id, dialog: row && toDialog(row) };
    });
  }

  async event(id: string): Promise<{ botId: string; dialogId: string | null; payload: string } | undefined> {
    const row = await this.db.selectFrom('bot_events').select(['bot_id', 'dialog_id', 'payload']).where('id', '=', id).executeTakeFirst();
    return row && { botId: row.bot_id, dialogId: row.dialog_id, payload: row.payload };
  }

  /** Queues an outbound event behind the bot's earlier ones, and the job that sends the queue. */
  async enqueueOutbound(botId: string, payload: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const last = await trx.selectFrom('bot_outbox').select((eb) => eb.fn.max('seq').as('seq')).where('bot_id', '=', botId).executeTakeFirst();
      const seq = Number(last?.seq ?? 0) + 1;
      await trx
        .insertInto('bot_outbox')
        .values({ id: newId('delivery'), bot_id: botId, seq, payload, status: 'pending', attempts: 0, next_attempt_at: now, claimed_until: null, last_error: null, created_at: now, delivered_at: null })
        .execute();
      await this.jobs.enqueue(trx, { kind: 'bot.deliver', subjectId: botId, runAt: now }, now);
    });
  }

  /**
   * Claims the oldest undelivered outbound event of a bot for sending. Undefined when the queue is empty, when its head
   * is claimed by another worker, or when the head waits for its next attempt (`waitUntil` says until when).
   */
  async claimHead(botId: string, now: number, claimMs: number): Promise<{ id: string; payload: string; attempts: number } | { waitUntil: number } | undefined> {
    const head = await this.db
      .selectFrom('bot_outbox')
      .select(['id', 'payload', 'attempts', 'status', 'claimed_until', 'next_attempt_at'])
      .where('bot_id', '=', botId)
      .where('status', 'in', ['pending', 'sending'])
      .orderBy('seq')
      .executeTakeFirst();
    if (!head) return undefined;
    if (head.status === 'sending' && (head.claimed_until ?? 0) > now) return undefined;
    if (head.next_attempt_at > now) return { waitUntil: head.next_attempt_at };
    const claimed = await this.db
      .updateTable('bot_outbox')
      .set({ status: 'sending', claimed_until: now + claimMs })
      .where('id', '=', head.id)
      .where((eb) => eb.or([eb('status', '=', 'pending'), eb('claimed_until', '<', now)]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return undefined;
    return { id: head.id, payload: head.payload, attempts: head.attempts };
  }

  async markOutbound(id: string, outcome: OutboundOutcome, now: number): Promise<void> {
    await this.db
      .updateTable('bot_outbox')
      .set({
        status: outcome.status,
        attempts: sql`attempts + 1`,
        last_error: outcome.error,
        claimed_until: null,
        ...(outcome.nextAttemptAt !== undefined ? { next_attempt_at: outcome.nextAttemptAt } : {}),
        ...(outcome.status === 'delivered' ? { delivered_at: now } : {}),
      })
      .where('id', '=', id)
      .execute();
  }
}
