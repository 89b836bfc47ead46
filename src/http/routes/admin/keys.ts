import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { KeysService } from '../../../features/keys/keys-service.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { adminActor } from '../../actors.ts';
import { keyChangesOf, keyFields, keyPatch, pageQuery } from '../management/keys.ts';
import { keyDetailsView } from '../management/views.ts';

const keyBody = z.object({
  ...keyFields,
  userId: z.string().min(1),
  orgId: z.string().min(1).nullable().optional(),
  name: z.string().max(200).nullable().optional(),
  /** The older name of `rpm`. */
  rateLimit: z.number().int().positive().max(1_000_000).nullable().optional(),
});

const keyListQuery = z.object({
  ...pageQuery,
  userId: z.string().min(1).optional(),
  orgId: z.string().min(1).optional(),
  query: z.string().min(1).max(200).optional(),
  revoked: z.enum(['true', 'false']).optional(),
});


/** API keys (DESIGN §4); the rules (owner, org membership, allowed models) are the service's. Bots: bots.ts. */
export function registerKeyRoutes(app: FastifyInstance, services: { keys: KeysService }): void {
  app.post('/admin/v1/keys', { config: { doc: { summary: 'Create a key for a user', body: keyBody } } }, async (request) => {
    const body = parseOrThrow(keyBody, request.body);
    const fields = keyChangesOf(body);
    const { key, text } = await services.keys.create(
      {
        userId: body.userId,
        orgId: body.orgId ?? null,
        name: body.name ?? null,
        allowedModels: body.allowedModels ?? null,
        rateLimit: fields.rateLimit ?? body.rateLimit ?? null,
        ...(body.scope ? { scope: body.scope } : {}),
        expiresAt: fields.expiresAt ?? null,
        limit: fields.limit ?? null,
        tpm: fields.tpm ?? null,
      },
      adminActor(request),
    );
    return { id: key.id, key: text, userId: key.userId, orgId: key.orgId, name: key.name, allowedModels: key.allowedModels, rateLimit: key.rateLimit, scope: key.scope };
  });

  app.get('/admin/v1/keys', { config: { doc: { summary: 'List keys', query: keyListQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(keyListQuery, request.query ?? {});
    const page = await services.keys.list({
      limit: query.limit,
      includeRevoked: query.revoked === 'true',
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(query.userId !== undefined ? { userId: query.userId } : {}),
      ...(query.orgId !== undefined ? { orgId: query.orgId } : {}),
      ...(query.query !== undefined ? { query: query.query } : {}),
    });
    const data = await Promise.all(page.keys.map(async (key) => keyDetailsView(await services.keys.details(key))));
    return { object: 'list', data, next_cursor: page.nextCursor ?? null };
  });

  app.get('/admin/v1/keys/:id', { config: { doc: { summary: 'One key' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const key = await services.keys.get(id);
    if (!key) throw new GatewayError('not_found', `No key '${id}'.`);
    return keyDetailsView(await services.keys.details(key));
  });

  app.patch('/admin/v1/keys/:id', { config: { doc: { summary: 'Change a key', body: keyPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(keyPatch, request.body ?? {});
    const key = await services.keys.update(id, keyChangesOf(body), adminActor(request));
    if (!key) throw new GatewayError('not_found', `No live key '${id}'.`);
    return keyDetailsView(await services.keys.details(key));
  });

  app.delete('/admin/v1/keys/:id', { config: { doc: { summary: 'Revoke a key' } } }, async (request) => {
    const { id } = request.params as { id: string };
    if (!(await services.keys.revoke(id, adminActor(request)))) throw new GatewayError('not_found', `No live key '${id}'.`);
    return { ok: true };
  });
}
