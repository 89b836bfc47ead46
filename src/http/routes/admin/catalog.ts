import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { CatalogService } from '../../../features/catalog/catalog-service.ts';
import type { ProviderRecord } from '../../../features/catalog/catalog.ts';
import { adminActor } from '../../actors.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { modelPatchSchema, modelSchema, type Model } from '../../../features/catalog/model.ts';
import type { Clock } from '../../../lib/clock.ts';
import { modelView } from '../models.ts';

const providerBody = z.object({ type: z.enum(['openai', 'anthropic']), baseUrl: z.url(), apiKey: z.string().min(1).nullable().optional() });
const providerPatch = providerBody.partial().refine((body) => Object.keys(body).length > 0, { message: 'give at least one of type, baseUrl and apiKey' });
const modelPut = modelSchema.omit({ id: true });
const modelPatch = modelPatchSchema;

/** A provider as the admin API shows it: never its API key, only whether one is set. */
export const providerView = (provider: ProviderRecord) => ({ id: provider.id, type: provider.type, baseUrl: provider.baseUrl, hasApiKey: provider.apiKey !== null });

function adminModelView(model: Model, now: number): Record<string, unknown> {
  const { retiresAt: _retiresAt, ...record } = model;
  return { ...record, ...modelView(model, now) };
}

/** Providers and the model catalog (DESIGN §4). */
export function registerCatalogRoutes(app: FastifyInstance, services: { catalog: CatalogService; clock: Clock }): void {
  app.put('/admin/v1/providers/:id', { config: { doc: { summary: 'Create or replace a provider', body: providerBody } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(providerBody, request.body);
    const provider = await services.catalog.putProvider({ id, type: body.type, baseUrl: body.baseUrl, apiKey: body.apiKey ?? null }, adminActor(request));
    return providerView(provider);
  });

  app.patch('/admin/v1/providers/:id', async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(providerPatch, request.body ?? {});
    const changes = { ...(body.type !== undefined ? { type: body.type } : {}), ...(body.baseUrl !== undefined ? { baseUrl: body.baseUrl } : {}), ...(body.apiKey !== undefined ? { apiKey: body.apiKey } : {}) };
    return providerView(await services.catalog.patchProvider(id, changes, adminActor(request)));
  });

  app.delete('/admin/v1/providers/:id', async (request) => {
    const { id } = request.params as { id: string };
    return { ...providerView(await services.catalog.deleteProvider(id, adminActor(request))), deleted: true };
  });

  app.get('/admin/v1/providers', { config: { doc: { summary: 'List providers (never their keys)', list: true } } }, async () => ({ object: 'list', data: services.catalog.listProviders().map(providerView), next_cursor: null }));

  app.get('/admin/v1/providers/:id', { config: { doc: { summary: 'One provider (never its key)' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const provider = services.catalog.provider(id);
    if (!provider) throw new GatewayError('not_found', `The provider '${id}' does not exist.`);
    return providerView(provider);
  });

  app.get('/admin/v1/models/:id', { config: { doc: { summary: 'One model of the catalog' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const model = services.catalog.get(id);
    if (!model) throw new GatewayError('not_found', `The model '${id}' does not exist.`);
    return adminModelView(model, services.clock.now());
  });

  app.get('/admin/v1/models', { config: { doc: { summary: 'The whole model catalog', list: true } } }, async () => {
    const now = services.clock.now();
    return { object: 'list', data: services.catalog.list().map((model) => adminModelView(model, now)), next_cursor: null };
  });

  app.put('/admin/v1/models/:id', { config: { doc: { summary: 'Create or replace a model (prices, retirement)', body: modelPut } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(modelPut, request.body);
    return adminModelView(await services.catalog.putModel(id, body, adminActor(request)), services.clock.now());
  });

  app.patch('/admin/v1/models/:id', { config: { doc: { summary: 'Change a model (prices, retirement)', body: modelPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(modelPatch, request.body ?? {});
    const model = await services.catalog.patchModel(id, body, adminActor(request));
    if (!model) throw new GatewayError('not_found', `The model '${id}' does not exist.`);
    return adminModelView(model, services.clock.now());
  });

  app.delete('/admin/v1/models/:id', async (request) => {
    const { id } = request.params as { id: string };
    await services.catalog.deleteModel(id, adminActor(request));
    return { id, object: 'model', deleted: true };
  });
}
