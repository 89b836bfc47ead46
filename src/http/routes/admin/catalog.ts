import type { FastifyInstance } from 'fastify';
import type { CatalogService } from '../../../features/catalog/catalog-service.ts';
import type { ProviderRecord } from '../../../features/catalog/catalog.ts';
import { providerInput, providerPatchInput, providerRecord } from '../../../features/catalog/provider-input.ts';
import type { ChannelHealthView } from '../../../providers/channels/channel-health.ts';
import { adminActor } from '../../actors.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { modelPatchSchema, modelSchema, type Model } from '../../../features/catalog/model.ts';
import type { Clock } from '../../../lib/clock.ts';
import { modelView } from '../models.ts';

const providerBody = providerInput;
const providerPatch = providerPatchInput;
const modelPut = modelSchema.omit({ id: true });
const modelPatch = modelPatchSchema;

/** Each channel's health in this process, by channel id (the provider registry's). */
export type ChannelHealthSource = (providerId: string) => ReadonlyMap<string, ChannelHealthView> | undefined;

const healthView = (health: ChannelHealthView | undefined) =>
  health
    ? { state: health.state, requests: health.requests, errors: health.errors, errorRate: health.errorRate, latencyMs: health.latencyMs, coolingUntil: health.coolingUntil === null ? null : new Date(health.coolingUntil).toISOString() }
    : { state: 'healthy' as const, requests: 0, errors: 0, errorRate: 0, latencyMs: { p50: null, p99: null }, coolingUntil: null };

/**
 * A provider as the admin API and the CLI show it: never an API key, only whether one is set. `baseUrl` and `hasApiKey`
 * are the first channel's (the one-channel form's fields); `channels` lists them all, with their health when `health` is
 * given (the gateway's own view; the CLI, a process of its own, has none).
 */
export function providerView(provider: ProviderRecord, health?: ChannelHealthSource) {
  const first = provider.channels[0];
  const healthOf = health?.(provider.id);
  return {
    id: provider.id,
    type: provider.type,
    baseUrl: first?.baseUrl ?? null,
    hasApiKey: first !== undefined && first.apiKey !== null,
    channels: provider.channels.map((channel) => ({
      id: channel.id,
      baseUrl: channel.baseUrl,
      hasApiKey: channel.apiKey !== null,
      weight: channel.weight,
      priority: channel.priority,
      models: channel.models,
      ...(health ? { health: healthView(healthOf?.get(channel.id)) } : {}),
    })),
  };
}

function adminModelView(model: Model, now: number): Record<string, unknown> {
  const { retiresAt: _retiresAt, ...record } = model;
  return { ...record, ...modelView(model, now) };
}

/** Providers and the model catalog (DESIGN §4). */
export function registerCatalogRoutes(app: FastifyInstance, services: { catalog: CatalogService; clock: Clock; channelHealth: ChannelHealthSource }): void {
  const view = (provider: ProviderRecord) => providerView(provider, services.channelHealth);

  app.put('/admin/v1/providers/:id', { config: { doc: { summary: 'Create or replace a provider: {type, channels} or the one-channel {type, baseUrl, apiKey}', body: providerBody } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(providerBody, request.body);
    return view(await services.catalog.putProvider(providerRecord(id, body), adminActor(request)));
  });

  app.patch('/admin/v1/providers/:id', { config: { doc: { summary: 'Change a provider (fields not named stay; channels replaces the list, a channel without apiKey keeps its stored key)', body: providerPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(providerPatch, request.body ?? {});
    return view(await services.catalog.patchProvider(id, body, adminActor(request)));
  });

  app.delete('/admin/v1/providers/:id', { config: { doc: { summary: 'Delete a provider no model routes to' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return { ...providerView(await services.catalog.deleteProvider(id, adminActor(request))), deleted: true };
  });

  app.get('/admin/v1/providers', { config: { doc: { summary: 'List providers with their channels and health (never their keys)', list: true } } }, async () => ({ object: 'list', data: services.catalog.listProviders().map(view), next_cursor: null }));

  app.get('/admin/v1/providers/:id', { config: { doc: { summary: 'One provider with its channels and their health (never its keys)' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const provider = services.catalog.provider(id);
    if (!provider) throw new GatewayError('not_found', `The provider '${id}' does not exist.`);
    return view(provider);
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

  app.delete('/admin/v1/models/:id', { config: { doc: { summary: 'Delete a model no other model redirects to' } } }, async (request) => {
    const { id } = request.params as { id: string };
    await services.catalog.deleteModel(id, adminActor(request));
    return { id, object: 'model', deleted: true };
  });
}
