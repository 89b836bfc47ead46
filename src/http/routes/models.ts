import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CatalogService } from '../../features/catalog/catalog-service.ts';
import type { Model } from '../../features/catalog/model.ts';
import { modelNotFound } from '../../features/catalog/retirement.ts';
import type { Clock } from '../../lib/clock.ts';
import { formatMoney, parseMoney } from '../../lib/money.ts';

/** SPEC 2.3 prices: four fraction digits (more only when the price has more; it is never rounded). */
const priceText = (text: string): string => formatMoney(parseMoney(text) ?? 0n, 4);

/** A catalog entry as SPEC 2.3 shows it, plus OpenAI's `owned_by` and `shutdown_date` (DESIGN §5). */
export function modelView(model: Model, now: number): Record<string, unknown> {
  return {
    id: model.id,
    object: 'model',
    created: model.created,
    owned_by: model.owned_by,
    title: model.title,
    max_capacity: model.max_capacity,
    cost_context: priceText(model.cost_context),
    cost_completion: priceText(model.cost_completion),
    deprecated: model.retiresAt !== null && now >= model.retiresAt,
    deprecated_at: model.retiresAt === null ? null : new Date(model.retiresAt).toISOString(),
    deprecation_redirect_to: model.deprecation_redirect_to,
    shutdown_date: model.retiresAt === null ? null : new Date(model.retiresAt).toISOString().slice(0, 10),
  };
}

/** modelView's shape, for GET /openapi.json (test/openapi.test.ts checks real answers against it). */
export const modelEntry = z.strictObject({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int().meta({ description: 'Unix seconds' }),
  owned_by: z.string(),
  title: z.string(),
  max_capacity: z.number().int(),
  cost_context: z.string().meta({ description: 'Input price, decimal text with four fraction digits' }),
  cost_completion: z.string().meta({ description: 'Output price, decimal text with four fraction digits' }),
  deprecated: z.boolean().meta({ description: 'true once the retirement date has arrived' }),
  deprecated_at: z.string().nullable().meta({ description: 'ISO 8601 time of retirement (may lie ahead); null: not retiring' }),
  deprecation_redirect_to: z.string().nullable().meta({ description: 'The model that serves requests after retirement; null: they fail with 410' }),
  shutdown_date: z.string().nullable().meta({ description: 'The retirement day (YYYY-MM-DD), as OpenAI names it' }),
});

const TEXT_KINDS = new Set(['chat', 'embedding', 'moderation']);
const ALL_KINDS = new Set(['chat', 'embedding', 'moderation', 'image', 'media', 'transcription']);

/** Prices per 1,000,000 tokens as the storefront shows them (the catalog keeps them per 1,000). */
const perMillion = (text: string): string => formatMoney((parseMoney(text) ?? 0n) * 1000n, 2);

/** A catalog entry as the storefront and the console show it: every kind, prices per 1M tokens, retirement state. */
function storefrontView(model: Model, now: number): Record<string, unknown> {
  return {
    ...modelView(model, now),
    kind: model.kind,
    family: model.family,
    vision: model.vision === true,
    input_per_million: perMillion(model.cost_context),
    output_per_million: perMillion(model.cost_completion),
    ...(model.cost_request !== undefined ? { cost_request: priceText(model.cost_request) } : {}),
    ...(model.cost_minute !== undefined ? { cost_minute: priceText(model.cost_minute) } : {}),
    retiring: model.retiresAt !== null && now < model.retiresAt,
  };
}

export function registerModelsRoute(app: FastifyInstance, catalog: CatalogService, clock: Clock): void {
  app.get('/v1/models', { config: { name: 'models', doc: { summary: 'List the models this key may use (SPEC 4.9)', list: true, response: modelEntry } } }, async (request) => {
    const now = clock.now();
    return { object: 'list', data: catalog.visible(request.apiKey?.allowedModels ?? null, TEXT_KINDS).map((model) => modelView(model, now)) };
  });

  // The storefront's catalog (DESIGN §10 GET /api/v1/models): public, every kind, nothing secret in it.
  app.get('/api/v1/models', { config: { auth: 'none', name: 'catalog', doc: { summary: 'The public model catalog with prices (storefront)', list: true } } }, async () => {
    const now = clock.now();
    return { object: 'list', data: catalog.visible(null, ALL_KINDS).map((model) => storefrontView(model, now)) };
  });

  // OpenAI's `models.retrieve(id)`: one entry, under the same rules as the list.
  app.get('/v1/models/:id', { config: { name: 'models.retrieve', doc: { summary: 'One model entry (SPEC 2.3)', response: modelEntry } } }, async (request) => {
    const { id } = request.params as { id: string };
    const model = catalog.visibleModel(id, request.apiKey?.allowedModels ?? null, TEXT_KINDS);
    if (!model) throw modelNotFound(id);
    return modelView(model, clock.now());
  });
}
