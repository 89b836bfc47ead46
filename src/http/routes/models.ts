import type { FastifyInstance } from 'fastify';
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

const TEXT_KINDS = new Set(['chat', 'embedding', 'moderation']);

export function registerModelsRoute(app: FastifyInstance, catalog: CatalogService, clock: Clock): void {
  app.get('/v1/models', { config: { name: 'models' } }, async (request) => {
    const now = clock.now();
    return { object: 'list', data: catalog.visible(request.apiKey?.allowedModels ?? null, TEXT_KINDS).map((model) => modelView(model, now)) };
  });

  // OpenAI's `models.retrieve(id)`: one entry, under the same rules as the list.
  app.get('/v1/models/:id', { config: { name: 'models.retrieve' } }, async (request) => {
    const { id } = request.params as { id: string };
    const model = catalog.visibleModel(id, request.apiKey?.allowedModels ?? null, TEXT_KINDS);
    if (!model) throw modelNotFound(id);
    return modelView(model, clock.now());
  });
}
