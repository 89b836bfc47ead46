import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import { costNumbers } from '../../features/billing/pricing.ts';
import type { Model } from '../../features/catalog/model.ts';
import type { MediaTaskInput, MediaTasksService } from '../../features/tasks/media-tasks-service.ts';
import { mediaTaskView, type FileUrl } from '../../features/tasks/task-views.ts';
import type { Clock } from '../../lib/clock.ts';
import { formatMoney, parseMoney } from '../../lib/money.ts';
import { keyText } from '../plugins/auth.ts';
import { callerOf, clientAbort, walletFromQuery } from '../caller.ts';
import { modelView } from './models.ts';

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

/** What the media routes need besides the service: how result files are linked, the clock and the currency of prices. */
export interface MediaRouteOptions {
  fileUrl: FileUrl;
  clock: Clock;
  currency: string;
}

/** Media model entries: SPEC 2.3's fields (retirement included), the media type and the price of one task. */
function mediaModelView(model: Model, now: number): Record<string, unknown> {
  return { ...modelView(model, now), type: model.mediaType ?? 'image', cost_request: formatMoney(parseMoney(model.cost_request ?? '0') ?? 0n, 4) };
}

function taskInput(request: FastifyRequest): MediaTaskInput {
  const { useWalletBalance, webhook_url: webhookUrl, model, ...input } = parseOrThrow(mediaSchema, request.body);
  return { model, input, webhookUrl, useWalletBalance: useWalletBalance === true || walletFromQuery(request), apiKeyText: keyText(request) ?? '' };
}

/** Media tasks (SPEC 4.10, 2.9, 9.6): models, price, create (shape C errors), generate, read. */
export function registerMediaRoutes(app: FastifyInstance, media: MediaTasksService, options: MediaRouteOptions): void {
  const { fileUrl, clock } = options;
  const shapeC = { errorShape: 'C' } as const;

  const listModels = async (request: FastifyRequest) => {
    const now = clock.now();
    return { object: 'list', data: media.models(request.apiKey).map((model) => mediaModelView(model, now)) };
  };
  const modelsDoc = { summary: 'List the media models with the price of one task', list: true };
  app.get('/v1/media/models', { config: { name: 'media.models', doc: modelsDoc } }, listModels);
  app.get('/api/v2/media/models', { config: { name: 'media.models', doc: modelsDoc } }, listModels);

  app.post('/api/v2/media/price', { config: { ...shapeC, name: 'media.price', doc: { summary: 'Price of one media task for a model', body: priceSchema } } }, async (request, reply) => {
    const body = parseOrThrow(priceSchema, request.body);
    const { resolution, cost } = media.price(callerOf(request), body.model);
    reply.headers(resolution.headers);
    return {
      code: 0,
      model: resolution.requested.id,
      price: formatMoney(cost.total, 4),
      currency: options.currency,
      usage: costNumbers(cost),
      ...(resolution.warning ? { warnings: [resolution.warning] } : {}),
    };
  });

  for (const [path, endpoint] of [
    ['/v1/media/create', 'media.create'],
    ['/api/v2/media/tasks', 'media.tasks'],
  ] as const) {
    app.post(path, { config: { ...shapeC, name: endpoint, doc: { summary: 'Create a media task (SPEC 4.10; shape C errors)', body: mediaSchema } } }, async (request, reply) => {
      const { task, resolution } = await media.create(callerOf(request), taskInput(request), endpoint);
      reply.headers(resolution.headers);
      return { ...mediaTaskView(task, fileUrl), ...(resolution.warning ? { warnings: [resolution.warning] } : {}) };
    });
  }

  // SPEC 9.6: generate neither redirects nor refuses retired models; it waits for its own task within a bound (202 after).
  app.post('/v1/media/generate', { config: { ...shapeC, name: 'media.generate', doc: { summary: 'Create a media task and wait for its result (202 with the task when it takes longer)', body: mediaSchema } } }, async (request, reply) => {
    const input = taskInput(request);
    const { task, finished } = await media.generate(callerOf(request), input, clientAbort(reply).signal);
    reply.code(finished ? 200 : 202);
    return mediaTaskView(task, fileUrl);
  });

  const read = async (request: FastifyRequest) => {
    const { id } = request.params as { id: string };
    return mediaTaskView(await media.get(callerOf(request), id), fileUrl);
  };
  const taskDoc = { summary: 'Read a media task (SPEC 2.9)' };
  app.get('/media/tasks/:id', { config: { ...shapeC, name: 'media.task', doc: taskDoc } }, read);
  app.get('/api/v2/media/tasks/:id', { config: { ...shapeC, name: 'media.task', doc: taskDoc } }, read);
}
