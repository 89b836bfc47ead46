import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Services } from '../../app.ts';
import { parseOrThrow } from '../../dialects/validation.ts';
import { priceRequest, costNumbers } from '../../features/billing/pricing.ts';
import type { Model } from '../../features/catalog/model.ts';
import { resolveModel, modelNotFound } from '../../features/catalog/retirement.ts';
import { checkModelAllowed } from '../../features/inference/model-call.ts';
import { mediaTaskView } from '../../features/tasks/task-views.ts';
import { isFinished, type Task } from '../../features/tasks/task.ts';
import { formatMoney, parseMoney } from '../../lib/money.ts';
import { keyText } from '../plugins/auth.ts';
import { callerOf, walletFromQuery } from '../caller.ts';
import { modelView } from './models.ts';

const MEDIA_KINDS = ['media', 'image'] as const;

const mediaSchema = z.object({
  model: z.string().min(1, 'must not be empty'),
  prompt: z.string().min(1, 'must not be empty').max(8000),
  webhook_url: z.string().optional(),
  images: z.array(z.string()).max(8).optional(),
  ar: z.string().max(10).optional(),
  size: z.string().max(20).optional(),
  voice: z.string().max(50).optional(),
  format: z.string().max(10).optional(),
  seconds: z.union([z.string(), z.number()]).optional(),
  useWalletBalance: z.boolean().optional(),
});

const priceSchema = z.looseObject({ model: z.string().min(1, 'must not be empty') });

/** Media model entries: SPEC 2.3's fields (retirement included), the media type and the price of one task. */
function mediaModelView(model: Model, now: number): Record<string, unknown> {
  return { ...modelView(model, now), type: model.mediaType ?? 'image', cost_request: formatMoney(parseMoney(model.cost_request ?? '0') ?? 0n, 4) };
}

/** Media tasks (SPEC 4.10, 2.9, 9.6): models, price, create (shape C errors), generate, read. */
export function registerMediaRoutes(app: FastifyInstance, services: Services): void {
  const fileUrl = services.fileUrl;
  const shapeC = { errorShape: 'C' } as const;

  const listModels = async (request: FastifyRequest) => {
    const allowed = request.apiKey?.allowedModels ?? null;
    const now = services.clock.now();
    const data = services.catalog
      .list()
      .filter((model) => (MEDIA_KINDS as readonly string[]).includes(model.kind) && (allowed === null || allowed.includes(model.id)))
      .map((model) => mediaModelView(model, now));
    return { object: 'list', data };
  };
  app.get('/v1/media/models', { config: { name: 'media.models' } }, listModels);
  app.get('/api/v2/media/models', { config: { name: 'media.models' } }, listModels);

  app.post('/api/v2/media/price', { config: { ...shapeC, name: 'media.price' } }, async (request, reply) => {
    const body = parseOrThrow(priceSchema, request.body);
    const caller = callerOf(request);
    if (!services.catalog.get(body.model)) throw modelNotFound(body.model);
    checkModelAllowed(caller.key, body.model);
    const resolution = resolveModel(services.catalog, body.model, 'media.price', MEDIA_KINDS, services.clock.now());
    reply.headers(resolution.headers);
    const cost = priceRequest(resolution.billed);
    return {
      code: 0,
      model: resolution.requested.id,
      price: formatMoney(cost.total, 4),
      currency: services.config.currency,
      usage: costNumbers(cost),
      ...(resolution.warning ? { warnings: [resolution.warning] } : {}),
    };
  });

  const create = async (request: FastifyRequest, endpoint: 'media.create' | 'media.tasks' | 'media.generate'): Promise<{ task: Task; headers: Record<string, string>; warnings: unknown[] | undefined }> => {
    const body = parseOrThrow(mediaSchema, request.body);
    const { useWalletBalance, webhook_url: webhookUrl, model, ...input } = body;
    const { task, resolution } = await services.tasks.create(callerOf(request), {
      kind: 'media',
      type: services.catalog.get(model)?.mediaType ?? 'image',
      model,
      endpoint,
      kinds: MEDIA_KINDS,
      input,
      webhookUrl,
      useWalletBalance: useWalletBalance === true || walletFromQuery(request),
      apiKeyText: keyText(request) ?? '',
    });
    return { task, headers: resolution.headers, warnings: resolution.warning ? [resolution.warning] : undefined };
  };

  for (const [path, endpoint] of [
    ['/v1/media/create', 'media.create'],
    ['/api/v2/media/tasks', 'media.tasks'],
  ] as const) {
    app.post(path, { config: { ...shapeC, name: endpoint } }, async (request, reply) => {
      const { task, headers, warnings } = await create(request, endpoint);
      reply.headers(headers);
      return { ...mediaTaskView(task, fileUrl), ...(warnings ? { warnings } : {}) };
    });
  }

  // SPEC 9.6: generate neither redirects nor refuses retired models; it waits for the result within a bound.
  app.post('/v1/media/generate', { config: { ...shapeC, name: 'media.generate' } }, async (request, reply) => {
    const { task } = await create(request, 'media.generate');
    const deadline = Date.now() + services.config.generateWaitMs;
    let current = task;
    while (!isFinished(current) && Date.now() < deadline) {
      await services.runner.runDue();
      current = await services.tasks.get(callerOf(request), task.id);
      if (!isFinished(current)) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    reply.code(isFinished(current) ? 200 : 202);
    return mediaTaskView(current, fileUrl);
  });

  const read = async (request: FastifyRequest) => {
    const { id } = request.params as { id: string };
    return mediaTaskView(await services.tasks.get(callerOf(request), id), fileUrl);
  };
  app.get('/media/tasks/:id', { config: { ...shapeC, name: 'media.task' } }, read);
  app.get('/api/v2/media/tasks/:id', { config: { ...shapeC, name: 'media.task' } }, read);
}
