import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../../app.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';

const keyBody = z.object({
  userId: z.string().min(1),
  orgId: z.string().min(1).nullable().optional(),
  name: z.string().max(200).nullable().optional(),
  allowedModels: z.array(z.string().min(1)).nullable().optional(),
  rateLimit: z.number().int().positive().max(1_000_000).nullable().optional(),
});

const botBody = z.object({
  userId: z.string().min(1),
  orgId: z.string().min(1).nullable().optional(),
  assistantId: z.string().min(1),
  webhookUrl: z.string().min(1).nullable().optional(),
});

export function registerKeyRoutes(app: FastifyInstance, services: Services): void {
  app.post('/admin/v1/bots', async (request) => {
    const body = parseOrThrow(botBody, request.body);
    if (!(await services.accounts.getUser(body.userId))) throw new GatewayError('not_found', `User '${body.userId}' does not exist.`, { param: 'userId' });
    if (body.orgId && !(await services.accounts.getRole(body.orgId, body.userId))) {
      throw new GatewayError('invalid_request', `orgId: user '${body.userId}' is not a member of '${body.orgId}'`, { param: 'orgId' });
    }
    const assistant = await services.assistantsRepository.get(body.assistantId);
    if (!assistant) throw new GatewayError('not_found', `Assistant '${body.assistantId}' does not exist.`, { param: 'assistantId' });
    const { bot, token } = await services.chatbot.create({ userId: body.userId, orgId: body.orgId ?? null, assistantId: assistant.id, webhookUrl: body.webhookUrl ?? null });
    return { id: bot.id, token, userId: bot.userId, orgId: bot.orgId, assistantId: bot.assistantId, webhookUrl: bot.webhookUrl };
  });

  app.post('/admin/v1/keys', async (request) => {
    const body = parseOrThrow(keyBody, request.body);
    if (!(await services.accounts.getUser(body.userId))) throw new GatewayError('not_found', `User '${body.userId}' does not exist.`, { param: 'userId' });
    if (body.orgId) {
      if (!(await services.accounts.getOrg(body.orgId))) throw new GatewayError('not_found', `Organization '${body.orgId}' does not exist.`, { param: 'orgId' });
      if (!(await services.accounts.getRole(body.orgId, body.userId))) {
        throw new GatewayError('invalid_request', `orgId: user '${body.userId}' is not a member of '${body.orgId}'`, { param: 'orgId' });
      }
    }
    const { key, text } = await services.keys.create({
      userId: body.userId,
      orgId: body.orgId ?? null,
      name: body.name ?? null,
      allowedModels: body.allowedModels ?? null,
      rateLimit: body.rateLimit ?? null,
    });
    return { id: key.id, key: text, userId: key.userId, orgId: key.orgId, name: key.name, allowedModels: key.allowedModels, rateLimit: key.rateLimit };
  });

  app.delete('/admin/v1/keys/:id', async (request) => {
    const { id } = request.params as { id: string };
    if (!(await services.keys.revoke(id))) throw new GatewayError('not_found', `No live key '${id}'.`);
    return { ok: true };
  });
}
