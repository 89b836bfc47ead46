import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ChatbotService } from '../../../features/chatbot/chatbot-service.ts';
import type { KeysService } from '../../../features/keys/keys-service.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';

const keyBody = z.object({
  userId: z.string().min(1),
  orgId: z.string().min(1).nullable().optional(),
  name: z.string().max(200).nullable().optional(),
  allowedModels: z.array(z.string().min(1)).nullable().optional(),
  rateLimit: z.number().int().positive().max(1_000_000).nullable().optional(),
  scope: z.enum(['inference', 'management']).optional(),
});

const botBody = z.object({
  userId: z.string().min(1),
  orgId: z.string().min(1).nullable().optional(),
  assistantId: z.string().min(1),
  webhookUrl: z.string().min(1).nullable().optional(),
  name: z.string().trim().min(1).max(200).nullable().optional(),
});

/** API keys and bots (DESIGN §4); the rules (owner, org membership, allowed models, assistant) are the services'. */
export function registerKeyRoutes(app: FastifyInstance, services: { keys: KeysService; chatbot: ChatbotService }): void {
  app.post('/admin/v1/bots', async (request) => {
    const body = parseOrThrow(botBody, request.body);
    const { bot, token } = await services.chatbot.create({ userId: body.userId, orgId: body.orgId ?? null, assistantId: body.assistantId, webhookUrl: body.webhookUrl ?? null, name: body.name ?? null });
    return { id: bot.id, name: bot.name, token, userId: bot.userId, orgId: bot.orgId, assistantId: bot.assistantId, webhookUrl: bot.webhookUrl };
  });

  app.post('/admin/v1/keys', async (request) => {
    const body = parseOrThrow(keyBody, request.body);
    const { key, text } = await services.keys.create({
      userId: body.userId,
      orgId: body.orgId ?? null,
      name: body.name ?? null,
      allowedModels: body.allowedModels ?? null,
      rateLimit: body.rateLimit ?? null,
      ...(body.scope ? { scope: body.scope } : {}),
    });
    return { id: key.id, key: text, userId: key.userId, orgId: key.orgId, name: key.name, allowedModels: key.allowedModels, rateLimit: key.rateLimit, scope: key.scope };
  });

  app.delete('/admin/v1/keys/:id', async (request) => {
    const { id } = request.params as { id: string };
    if (!(await services.keys.revoke(id))) throw new GatewayError('not_found', `No live key '${id}'.`);
    return { ok: true };
  });
}
