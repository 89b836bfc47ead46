import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidParam } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Bot } from '../../../features/chatbot/bot.ts';
import type { BotIntegrationsService } from '../../../features/chatbot/bot-integrations-service.ts';
import { decodeIdCursor, pageOf } from '../../../storage/id-cursor.ts';
import { actorOf, iso, pageQuery } from './actor.ts';

const name = z.string().trim().min(1).max(200);
const id = z.string().min(1).max(200);
const webhookUrl = z.string().min(1).max(2000).nullable();
const botBody = z.object({ name, assistantId: id, orgId: id.nullable().optional(), webhookUrl: webhookUrl.optional() });
const botPatch = z.object({ name: name.optional(), assistantId: id.optional(), webhookUrl: webhookUrl.optional(), orgId: z.unknown().optional() });
const botParams = z.object({ id });
const listQuery = pageQuery.extend({ orgId: id.optional() });

const botView = (bot: Bot) => ({
  id: bot.id,
  object: 'bot',
  name: bot.name,
  userId: bot.userId,
  orgId: bot.orgId,
  assistantId: bot.assistantId,
  webhookUrl: bot.webhookUrl,
  createdAt: iso(bot.createdAt),
});

/** GET/POST /api/v1/bots, GET/PATCH/DELETE /api/v1/bots/:id (DESIGN §10): bot integrations run by their owner. */
export function registerBotRoutes(app: FastifyInstance, bots: BotIntegrationsService): void {
  app.get('/api/v1/bots', { config: { auth: 'user', name: 'bots.list', doc: { summary: 'List your chat bots', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const rows = await bots.list(actorOf(request).id, { orgId: query.orgId, limit: query.limit + 1, after: decodeIdCursor(query.cursor) });
    const page = pageOf(rows, query.limit);
    return { object: 'list', data: page.items.map(botView), next_cursor: page.nextCursor };
  });

  app.post('/api/v1/bots', { config: { auth: 'user', name: 'bots.create', doc: { summary: 'Create a chat bot for an assistant', body: botBody } } }, async (request) => {
    const body = parseOrThrow(botBody, request.body);
    const { bot, token } = await bots.create(actorOf(request), { name: body.name, assistantId: body.assistantId, orgId: body.orgId ?? null, webhookUrl: body.webhookUrl ?? null });
    // The token is shown here only; the chat service authenticates with it (SPEC 4.1).
    return { ...botView(bot), token };
  });

  app.get('/api/v1/bots/:id', { config: { auth: 'user', name: 'bots.get', doc: { summary: 'One of your chat bots', params: botParams } } }, async (request) => {
    const params = parseOrThrow(botParams, request.params);
    return botView(await bots.get(actorOf(request).id, params.id));
  });

  app.patch('/api/v1/bots/:id', { config: { auth: 'user', name: 'bots.update', doc: { summary: 'Change a chat bot', params: botParams, body: botPatch } } }, async (request) => {
    const params = parseOrThrow(botParams, request.params);
    const body = parseOrThrow(botPatch, request.body ?? {});
    // Moving a bot to another payer would move its dialogs' charges: make a new bot instead.
    if (body.orgId !== undefined) throw invalidParam('orgId', 'cannot be changed; create a new bot for another account');
    return botView(await bots.update(actorOf(request), params.id, body));
  });

  app.delete('/api/v1/bots/:id', { config: { auth: 'user', name: 'bots.delete', doc: { summary: 'Delete a chat bot', params: botParams } } }, async (request) => {
    const params = parseOrThrow(botParams, request.params);
    return { ...botView(await bots.delete(actorOf(request), params.id)), deleted: true };
  });
}
