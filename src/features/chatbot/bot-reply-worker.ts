import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import { unixSeconds, type Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { ERROR_CATALOGUE, GatewayError } from '../../core/errors.ts';
import type { AssistantChatService } from '../assistants/assistant-chat.ts';
import type { AssistantsRepository } from '../assistants/assistant.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { RequestLog } from '../usage/request-log-writer.ts';
import type { Caller } from '../inference/model-call.ts';
import type { ApiKey } from '../keys/keys.ts';
import { inboundEventSchema, type Bot, type BotDialog, type BotsRepository, type ClientMessageEvent } from './bot.ts';
import { asksForHuman, HandOverToolset } from './hand-over.ts';

/** Earlier messages of the dialog given to the assistant as context. */
const DIALOG_CONTEXT = 20;
const NOBODY_ONLINE_NOTE =
  'The client asked for a human operator, but no operator is online now. Say so briefly and keep helping the client yourself.';

export interface BotReplyDependencies {
  bots: BotsRepository;
  assistants: AssistantsRepository;
  chat: AssistantChatService;
  catalog: CatalogService;
  book: BalanceBook;
  clock: Clock;
  logger: Logger;
  /** Each reply is logged as a request of its own (endpoint `bot.reply`, key id = the bot's id), so /usage counts what it costs. */
  requestLog?: Pick<RequestLog, 'begin'>;
}

/**
 * The `bot.reply` job: answers one CLIENT_MESSAGE while its dialog is with the bot and the paying balance is positive.
 * Replies (BOT_MESSAGE) and hand-overs (INVITE_AGENT) go to the bot's outbound queue, which delivers them in order.
 */
export class BotReplyWorker {
  constructor(private readonly dependencies: BotReplyDependencies) {}

  readonly run = async (job: Job): Promise<JobOutcome> => {
    const { bots } = this.dependencies;
    const stored = await bots.event(job.subjectId);
    if (!stored?.dialogId) return { type: 'done' };
    const [bot, dialog] = await Promise.all([bots.get(stored.botId), bots.dialog(stored.dialogId)]);
    // An operator has the chat, one is being invited, or the chat is over: the bot stays silent.
    if (!bot || !dialog || dialog.state !== 'bot') return { type: 'done' };
    const parsed = inboundEventSchema.safeParse(JSON.parse(stored.payload));
    if (!parsed.success || parsed.data.event !== 'CLIENT_MESSAGE') return { type: 'done' };
    const event = parsed.data;
    const payer = bot.orgId ? { type: 'org' as const, id: bot.orgId } : { type: 'user' as const, id: bot.userId };
    if (!(await this.dependencies.book.isPositive(payer))) return { type: 'done' };

    const wantsHuman = asksForHuman(event.message.text);
    if (wantsHuman && event.agents_online) {
      await this.invite(bot, dialog, event);
      return { type: 'done' };
    }
    try {
      await this.answer(bot, dialog, event, wantsHuman ? NOBODY_ONLINE_NOTE : '');
    } catch (error) {
      if (error instanceof GatewayError && (error.code === 'insufficient_balance' || error.status < 500)) {
        this.dependencies.logger.warn({ bot: bot.id, err: error }, 'bot reply not produced');
        return { type: 'done' };
      }
      if (job.attempts < 2) return { type: 'retry', at: this.dependencies.clock.now() + 5_000 * (job.attempts + 1), error: error instanceof Error ? error.message : String(error) };
      return { type: 'failed', error: error instanceof Error ? error.message : String(error) };
    }
    return { type: 'done' };
  };

  private async answer(bot: Bot, dialog: BotDialog, event: ClientMessageEvent, note: string): Promise<void> {
    const assistant = await this.dependencies.assistants.get(bot.assistantId);
    if (!assistant) throw new GatewayError('not_found', 'Assistant not found');
    const vision = this.dependencies.catalog.get(assistant.modelId)?.vision === true;
    const handOver = event.agents_online ? new HandOverToolset() : undefined;
    const key: ApiKey = { id: bot.id, userId: bot.userId, orgId: bot.orgId, name: 'bot', allowedModels: null, rateLimit: null, revokedAt: null, createdAt: bot.createdAt, scope: 'inference', expiresAt: null, disabled: false, limit: null, tpm: null };
    const requestId = newId('request');
    const startedAt = performance.now();
    const trace = this.dependencies.requestLog?.begin(requestId, startedAt);
    let status = 500;
    try {
      await this.reply(bot, dialog, event, note, { key, requestId, trace }, vision, assistant.mention, handOver);
      status = 200;
    } catch (error) {
      if (error instanceof GatewayError) {
        status = error.status;
        trace?.failed(ERROR_CATALOGUE[error.code].typeA);
      } else {
        trace?.failed('api_error');
      }
      throw error;
    } finally {
      trace?.close({ key, endpoint: 'bot.reply', bodyModel: assistant.modelId, status, latencyMs: Math.round(performance.now() - startedAt) });
    }
  }

  private async reply(
    bot: Bot,
    dialog: BotDialog,
    event: ClientMessageEvent,
    note: string,
    caller: Caller,
    vision: boolean,
    assistantCode: string,
    handOver: HandOverToolset | undefined,
  ): Promise<void> {
    const { chat, clock } = this.dependencies;
    const turn = await chat.prepare(
      caller,
      {
        chatId: dialog.id,
        assistantCode,
        message: event.message.text || '(the client sent no text)',
        maxContext: DIALOG_CONTEXT,
        images: vision ? (event.message.images ?? []) : [],
        useWalletBalance: false,
      },
      handOver ? [handOver] : [],
      note,
    );
    const result = await chat.run(turn);
    const text = typeof result.message === 'string' ? result.message : '';
    if (text) {
      await this.send(bot, {
        event: 'BOT_MESSAGE',
        id: randomUUID(),
        chat_id: dialog.chatId,
        client_id: dialog.clientId,
        client_event_id: event.id,
        message: { type: 'MARKDOWN', text, content: text, timestamp: unixSeconds(clock) },
      });
    }
    if (handOver?.requested) await this.invite(bot, dialog, event);
  }

  private async invite(bot: Bot, dialog: BotDialog, event: ClientMessageEvent): Promise<void> {
    await this.send(bot, { event: 'INVITE_AGENT', id: randomUUID(), chat_id: dialog.chatId, client_id: dialog.clientId, client_event_id: event.id });
    await this.dependencies.bots.setState(dialog.id, 'waiting', this.dependencies.clock.now());
  }

  private send(bot: Bot, payload: Record<string, unknown>): Promise<void> {
    return this.dependencies.bots.enqueueOutbound(bot.id, JSON.stringify(payload), this.dependencies.clock.now());
  }
}
