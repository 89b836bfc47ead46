import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import { isManager, requireRole } from '../accounts/org-access.ts';
import type { AssistantsRepository } from '../assistants/assistant.ts';
import type { Actor } from '../audit/audit.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { Bot, BotFilter, BotsRepository } from './bot.ts';
import { decodeIdCursor, encodeIdCursor } from '../../lib/id-cursor.ts';
import type { ChatbotService } from './chatbot-service.ts';

type UserActor = Actor & { id: string };

/** What a bot's owner (or the operator) may change; the paying account stays (a new bot for another one). */
export interface BotChanges {
  name?: string | undefined;
  assistantId?: string | undefined;
  webhookUrl?: string | null | undefined;
}

const botNotFound = (id: string): GatewayError => new GatewayError('not_found', `Bot '${id}' does not exist.`);

/** What an owner sees of a bot: never its token (shown once, at creation). */
export const settingsOf = (bot: Bot) => ({ name: bot.name, assistantId: bot.assistantId, orgId: bot.orgId, webhookUrl: bot.webhookUrl });

/**
 * Bot integrations managed by their owner (SPEC 4.1 rule 1, DESIGN §10 `/bots`): a user runs their own bots; the owners and
 * admins of an org also run the bots that charge the org. The assistant must be one the user may use (their own, a public
 * one, or a private one of an org they belong to); the webhook URL passes the URL guard. Deleting revokes the token at once.
 */
export class BotIntegrationsService {
  constructor(
    private readonly chatbot: ChatbotService,
    private readonly repository: BotsRepository,
    private readonly accounts: Pick<AccountsService, 'getRole'>,
    private readonly assistants: Pick<AssistantsRepository, 'get'>,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** The caller's own bots, or with `orgId` the org's (owners and admins). */
  async list(userId: string, query: { orgId?: string | undefined; limit: number; after: string | undefined }): Promise<Bot[]> {
    if (query.orgId === undefined) return this.repository.list({ userId }, query.limit, query.after);
    await requireRole(this.accounts, query.orgId, userId, 'manager');
    return this.repository.list({ orgId: query.orgId }, query.limit, query.after);
  }

  /** A bot the caller may run, or 404 as if it did not exist. */
  async get(userId: string, id: string): Promise<Bot> {
    const bot = await this.repository.get(id);
    if (!bot) throw botNotFound(id);
    if (bot.userId === userId) return bot;
    const role = bot.orgId ? await this.accounts.getRole(bot.orgId, userId) : undefined;
    if (!role || !isManager(role)) throw botNotFound(id);
    return bot;
  }

  /** A bot of the caller, charging the caller or (with `orgId`) an org the caller belongs to. The token is returned once. */
  async create(actor: UserActor, input: { name: string; assistantId: string; orgId: string | null; webhookUrl: string | null }): Promise<{ bot: Bot; token: string }> {
    if (input.orgId !== null) await requireRole(this.accounts, input.orgId, actor.id, 'member');
    await this.checkAssistant(actor.id, input.assistantId);
    const created = await this.chatbot.create({ userId: actor.id, orgId: input.orgId, assistantId: input.assistantId, webhookUrl: input.webhookUrl, name: input.name });
    await this.audit.record(actor, 'bot.create', { type: 'bot', id: created.bot.id }, { after: settingsOf(created.bot), orgId: created.bot.orgId });
    return created;
  }

  async update(actor: UserActor, id: string, changes: BotChanges): Promise<Bot> {
    return this.change(actor, await this.get(actor.id, id), changes, actor.id);
  }

  /** Deletes the bot: its token fails at once on every node (each inbound call reads the database), queued replies stop. */
  async delete(actor: UserActor, id: string): Promise<Bot> {
    return this.remove(actor, await this.get(actor.id, id));
  }

  /** The operator's list of every live bot (admin API, CLI), newest first; `query` matches name or id. */
  async operatorList(filter: BotFilter & { limit: number; cursor?: string | undefined }): Promise<{ bots: Bot[]; nextCursor: string | undefined }> {
    const rows = await this.repository.search(filter, filter.limit + 1, filter.cursor === undefined ? undefined : decodeIdCursor(filter.cursor));
    const bots = rows.slice(0, filter.limit);
    return { bots, nextCursor: rows.length > filter.limit ? encodeIdCursor(bots[bots.length - 1]!.id) : undefined };
  }

  /** Any live bot, for the operator; 404 when it does not exist or was deleted. */
  async operatorGet(id: string): Promise<Bot> {
    const bot = await this.repository.get(id);
    if (!bot) throw botNotFound(id);
    return bot;
  }

  /** A bot made by the operator for a user (admin API, CLI): the same checks as every door (ChatbotService.create), audited. */
  async operatorCreate(actor: Actor, input: { userId: string; orgId: string | null; assistantId: string; webhookUrl: string | null; name: string | null }): Promise<{ bot: Bot; token: string }> {
    const created = await this.chatbot.create(input);
    await this.audit.record(actor, 'bot.create', { type: 'bot', id: created.bot.id }, { after: { ...settingsOf(created.bot), userId: created.bot.userId }, orgId: created.bot.orgId });
    return created;
  }

  /** The operator changes any bot under the owner's rules: the assistant must be one the bot's user may use, the URL passes the guard. */
  async operatorUpdate(actor: Actor, id: string, changes: BotChanges): Promise<Bot> {
    const bot = await this.operatorGet(id);
    return this.change(actor, bot, changes, bot.userId);
  }

  /** The operator deletes any bot; as the owner's delete, its token stops working at once. */
  async operatorDelete(actor: Actor, id: string): Promise<Bot> {
    return this.remove(actor, await this.operatorGet(id));
  }

  /** One rule for every door: the assistant is one `assistantUser` may use, the webhook URL passes the guard; audited before → after. */
  private async change(actor: Actor, before: Bot, changes: BotChanges, assistantUser: string): Promise<Bot> {
    if (changes.assistantId !== undefined) await this.checkAssistant(assistantUser, changes.assistantId);
    if (changes.webhookUrl) await this.chatbot.checkUrl(changes.webhookUrl, 'webhookUrl');
    await this.repository.update(before.id, {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.assistantId !== undefined ? { assistantId: changes.assistantId } : {}),
      ...(changes.webhookUrl !== undefined ? { webhookUrl: changes.webhookUrl } : {}),
    });
    const after = await this.repository.get(before.id);
    // Deleted by another call in between: gone for this one too.
    if (!after) throw botNotFound(before.id);
    await this.audit.record(actor, 'bot.update', { type: 'bot', id: before.id }, { before: settingsOf(before), after: settingsOf(after), orgId: after.orgId });
    return after;
  }

  private async remove(actor: Actor, bot: Bot): Promise<Bot> {
    if (!(await this.repository.revoke(bot.id, this.clock.now()))) throw botNotFound(bot.id);
    await this.audit.record(actor, 'bot.delete', { type: 'bot', id: bot.id }, { before: settingsOf(bot), after: null, orgId: bot.orgId });
    return bot;
  }

  /** A member who leaves an org stops charging it through their bots. */
  async revokeMemberBots(orgId: string, userId: string): Promise<void> {
    const ids = await this.repository.revokeMemberBots(orgId, userId, this.clock.now());
    for (const id of ids) await this.audit.record({ type: 'system', id: null, ip: null }, 'bot.delete', { type: 'bot', id }, { before: { reason: 'member left the organization' }, orgId });
  }

  /** The caller's own assistant, a public one, or a private one of an org the caller belongs to; else 404 as if unknown. */
  private async checkAssistant(userId: string, assistantId: string): Promise<void> {
    const assistant = await this.assistants.get(assistantId);
    const usable =
      assistant !== undefined &&
      (assistant.ownerId === userId || !assistant.access.isPrivate || (assistant.access.orgId !== null && (await this.accounts.getRole(assistant.access.orgId, userId)) !== undefined));
    if (!usable) throw new GatewayError('not_found', `Assistant '${assistantId}' does not exist.`, { param: 'assistantId' });
  }
}
