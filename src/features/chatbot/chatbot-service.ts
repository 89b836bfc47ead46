import { GatewayError, invalidParam, unauthorized } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import type { Money } from '../../lib/money.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { refuseUrl } from '../../lib/url-guard.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { AssistantsRepository } from '../assistants/assistant.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import type { Bot, BotsRepository, InboundEvent } from './bot.ts';

const STATE_AFTER: Partial<Record<InboundEvent['event'], 'agent' | 'bot' | 'closed'>> = {
  AGENT_JOINED: 'agent',
  AGENT_UNAVAILABLE: 'bot',
  CHAT_CLOSED: 'closed',
};

/**
 * The bot integration's inbound side: bots and their tokens, the chat service's events (accepted at once, de-duplicated
 * by event id, worked on by durable jobs), the reply URL, and the paying account's balance.
 */
export class ChatbotService {
  constructor(
    private readonly repository: BotsRepository,
    private readonly book: BalanceBook,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly allowPrivateUrls: boolean,
    private readonly accounts: Pick<AccountsService, 'getUser' | 'getOrg' | 'getRole'>,
    private readonly assistants: Pick<AssistantsRepository, 'get'>,
  ) {}

  /**
   * A bot for an assistant; the token is returned once. Every door (admin API, CLI) gets the same checks: the user exists,
   * an org it charges exists and has the user as a member, the assistant exists, the webhook URL is allowed.
   */
  async create(input: { userId: string; orgId: string | null; assistantId: string; webhookUrl: string | null; name?: string | null }): Promise<{ bot: Bot; token: string }> {
    if (!(await this.accounts.getUser(input.userId))) throw new GatewayError('not_found', `User '${input.userId}' does not exist.`, { param: 'userId' });
    if (input.orgId) {
      if (!(await this.accounts.getOrg(input.orgId))) throw new GatewayError('not_found', `Organization '${input.orgId}' does not exist.`, { param: 'orgId' });
      if (!(await this.accounts.getRole(input.orgId, input.userId))) {
        throw new GatewayError('invalid_request', `orgId: user '${input.userId}' is not a member of '${input.orgId}'`, { param: 'orgId' });
      }
    }
    if (!(await this.assistants.get(input.assistantId))) throw new GatewayError('not_found', `Assistant '${input.assistantId}' does not exist.`, { param: 'assistantId' });
    if (input.webhookUrl) await this.checkUrl(input.webhookUrl, 'webhookUrl');
    const token = `tgb-${randomBase62(40)}`;
    const bot: Bot = { id: newId('bot'), name: input.name ?? null, userId: input.userId, orgId: input.orgId, assistantId: input.assistantId, tokenSealed: this.secrets.seal(token), webhookUrl: input.webhookUrl, createdAt: this.clock.now() };
    await this.repository.insert(bot, sha256Hex(token));
    return { bot, token };
  }

  /** The bot of an `Authorization: <token>` (or `Bearer <token>`) header. */
  async authenticate(header: string | undefined): Promise<Bot> {
    const token = header?.replace(/^Bearer\s+/i, '').trim();
    const bot = token ? await this.repository.byTokenHash(sha256Hex(token)) : undefined;
    if (!bot) throw unauthorized();
    return bot;
  }

  payerOf(bot: Bot): AccountRef {
    return bot.orgId ? { type: 'org', id: bot.orgId } : { type: 'user', id: bot.userId };
  }

  async balance(bot: Bot): Promise<Money> {
    return (await this.book.balance(this.payerOf(bot))) ?? 0n;
  }

  /** A webhook URL the gateway may post to (SSRF guard unless private URLs are allowed); `param` names the field in the 400. */
  async checkUrl(url: string, param = 'webHookUrl'): Promise<void> {
    const refused = await refuseUrl(url, this.allowPrivateUrls);
    if (refused) throw invalidParam(param, refused);
  }

  async configure(bot: Bot, webHookUrl: string): Promise<void> {
    await this.checkUrl(webHookUrl);
    await this.repository.setWebhook(bot.id, webHookUrl);
  }

  /**
   * Takes an inbound event. A repeated id is accepted and ignored. CLIENT_MESSAGE opens a dialog when the chat has none
   * and queues the reply; the agent and close events move the dialog's state.
   */
  async receive(bot: Bot, event: InboundEvent, raw: string): Promise<{ duplicate: boolean }> {
    const now = this.clock.now();
    const isMessage = event.event === 'CLIENT_MESSAGE';
    const accepted = await this.repository.acceptEvent(
      bot,
      { eventId: event.id, event: event.event, chatId: event.chat_id, clientId: event.client_id, payload: raw },
      { openDialog: isMessage, replyJob: isMessage },
      now,
    );
    if (!accepted) return { duplicate: true };
    const next = STATE_AFTER[event.event];
    const dialog = accepted.dialog;
    if (next && dialog) {
      // AGENT_UNAVAILABLE only means something while an operator is awaited; a closed chat stays closed.
      if (next !== 'bot' || dialog.state === 'waiting') await this.repository.setState(dialog.id, next, now);
    }
    return { duplicate: false };
  }
}
