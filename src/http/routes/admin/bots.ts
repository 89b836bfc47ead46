import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidParam } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Bot } from '../../../features/chatbot/bot.ts';
import type { BotIntegrationsService } from '../../../features/chatbot/bot-integrations-service.ts';
import { adminActor } from '../../actors.ts';
import { listOf, listQuery } from './admin-schemas.ts';

const id = z.string().min(1).max(200);
const name = z.string().trim().min(1).max(200);
const webhookUrl = z.string().min(1).max(2000).nullable();
const botBody = z.object({
  userId: id,
  orgId: id.nullable().optional(),
  assistantId: id,
  webhookUrl: webhookUrl.optional(),
  name: name.nullable().optional(),
});
const botPatch = z.object({ name: name.optional(), assistantId: id.optional(), webhookUrl: webhookUrl.optional(), orgId: z.unknown().optional(), userId: z.unknown().optional() });
const botListQuery = listQuery.extend({ userId: id.optional(), orgId: id.optional() });

/** A bot as the operator sees it: never its token (shown once, at creation). */
export const adminBotView = (bot: Bot) => ({
  id: bot.id,
  object: 'bot' as const,
  name: bot.name,
  userId: bot.userId,
  orgId: bot.orgId,
  assistantId: bot.assistantId,
  webhookUrl: bot.webhookUrl,
  createdAt: new Date(bot.createdAt).toISOString(),
});

/** POST and GET /admin/v1/bots, GET, PATCH and DELETE /admin/v1/bots/:id (DESIGN §4): the owner's rules, audited. */
export function registerAdminBotRoutes(app: FastifyInstance, bots: BotIntegrationsService): void {
  app.post('/admin/v1/bots', async (request) => {
    const body = parseOrThrow(botBody, request.body);
    const { bot, token } = await bots.operatorCreate(adminActor(request), { userId: body.userId, orgId: body.orgId ?? null, assistantId: body.assistantId, webhookUrl: body.webhookUrl ?? null, name: body.name ?? null });
    // The token is shown here only.
    return { ...adminBotView(bot), token };
  });

  app.get('/admin/v1/bots', async (request) => {
    const query = parseOrThrow(botListQuery, request.query);
    const page = await bots.operatorList({ limit: query.limit, query: query.query, cursor: query.cursor, userId: query.userId, orgId: query.orgId });
    return listOf(page.bots.map(adminBotView), page.nextCursor);
  });

  app.get('/admin/v1/bots/:id', async (request) => {
    const { id: botId } = request.params as { id: string };
    return adminBotView(await bots.operatorGet(botId));
  });

  app.patch('/admin/v1/bots/:id', async (request) => {
    const { id: botId } = request.params as { id: string };
    const body = parseOrThrow(botPatch, request.body ?? {});
    // Moving a bot to another payer would move its dialogs' charges: make a new bot instead (as at the owner's door).
    if (body.orgId !== undefined) throw invalidParam('orgId', 'cannot be changed; create a new bot for another account');
    if (body.userId !== undefined) throw invalidParam('userId', 'cannot be changed; create a new bot for another account');
    return adminBotView(await bots.operatorUpdate(adminActor(request), botId, { name: body.name, assistantId: body.assistantId, webhookUrl: body.webhookUrl }));
  });

  app.delete('/admin/v1/bots/:id', async (request) => {
    const { id: botId } = request.params as { id: string };
    return { ...adminBotView(await bots.operatorDelete(adminActor(request), botId)), deleted: true };
  });
}
