import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Actor } from '../../../features/audit/audit.ts';
import { KEY_SCOPES, SPEND_PERIODS, type KeyChanges } from '../../../features/keys/keys.ts';
import type { OwnerKeysService } from '../../../features/keys/owner-keys.ts';
import { moneyInput } from '../admin/admin-schemas.ts';
import { principalOf } from './me.ts';
import { keyDetailsView } from './views.ts';
import { deletedResponse } from '../../route-doc.ts';

/** An ISO 8601 time with its offset (`2026-12-31T00:00:00Z`) → Unix ms; null clears it. */
const timeInput = z.iso.datetime({ offset: true }).transform((text) => Date.parse(text));

/** The fields a key's owner (or the operator) chooses, on creation and edit alike (DESIGN §10 "Key limits"). */
export const keyFields = {
  name: z.string().min(1).max(200).nullable().optional(),
  scope: z.enum(KEY_SCOPES).optional(),
  allowedModels: z.array(z.string().min(1).max(200)).max(1000).nullable().optional(),
  expiresAt: timeInput.nullable().optional(),
  limit: z.object({ amount: moneyInput, period: z.enum(SPEND_PERIODS) }).strict().nullable().optional(),
  rpm: z.number().int().positive().max(1_000_000).nullable().optional(),
  tpm: z.number().int().positive().max(1_000_000_000).nullable().optional(),
};

export const keyPatch = z.object({ ...keyFields, disabled: z.boolean().optional() }).strict();

/** `?limit=&cursor=` of every list. */
export const pageQuery = {
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(500).optional(),
};

const keyCreate = z.object({ ...keyFields, name: z.string().min(1).max(200), orgId: z.string().min(1).nullable().optional() }).strict();
const keyListQuery = z.object({ ...pageQuery, orgId: z.string().min(1).optional() });

type KeyFieldsInput = Partial<Pick<z.output<typeof keyPatch>, 'name' | 'scope' | 'allowedModels' | 'expiresAt' | 'limit' | 'rpm' | 'tpm' | 'disabled'>>;

/** The request's fields as the keys service names them (`rpm` is the key's `rateLimit`); absent ones stay absent. */
export function keyChangesOf(body: KeyFieldsInput): KeyChanges {
  const changes: KeyChanges = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.scope !== undefined) changes.scope = body.scope;
  if (body.allowedModels !== undefined) changes.allowedModels = body.allowedModels;
  if (body.expiresAt !== undefined) changes.expiresAt = body.expiresAt;
  if (body.limit !== undefined) changes.limit = body.limit;
  if (body.rpm !== undefined) changes.rateLimit = body.rpm;
  if (body.tpm !== undefined) changes.tpm = body.tpm;
  if (body.disabled !== undefined) changes.disabled = body.disabled;
  return changes;
}

const userActor = (request: FastifyRequest): Actor => ({ type: 'user', id: principalOf(request).user.id, ip: request.ip });

/** GET, POST /api/v1/keys and GET, PATCH, DELETE /api/v1/keys/:id: keys managed by their owners (DESIGN §10). */
export function registerKeysRoutes(app: FastifyInstance, ownerKeys: OwnerKeysService): void {
  app.get('/api/v1/keys', { config: { auth: 'user', name: 'keys.list', doc: { summary: 'List your keys', query: keyListQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(keyListQuery, request.query ?? {});
    const page = await ownerKeys.list(principalOf(request).user.id, {
      limit: query.limit,
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(query.orgId !== undefined ? { orgId: query.orgId } : {}),
    });
    return { object: 'list', data: page.keys.map(keyDetailsView), next_cursor: page.nextCursor ?? null };
  });

  app.post('/api/v1/keys', { config: { auth: 'user', name: 'keys.create', doc: { summary: 'Create a key (its text is shown once)', body: keyCreate } } }, async (request) => {
    const body = parseOrThrow(keyCreate, request.body ?? {});
    const { name, ...fields } = keyChangesOf(body);
    const { details, text } = await ownerKeys.create(
      principalOf(request).user.id,
      {
        name: name ?? body.name,
        orgId: body.orgId ?? null,
        allowedModels: fields.allowedModels ?? null,
        ...(fields.scope !== undefined ? { scope: fields.scope } : {}),
        expiresAt: fields.expiresAt ?? null,
        limit: fields.limit ?? null,
        rateLimit: fields.rateLimit ?? null,
        tpm: fields.tpm ?? null,
      },
      userActor(request),
    );
    return { ...keyDetailsView(details), key: text };
  });

  app.get('/api/v1/keys/:id', { config: { auth: 'user', name: 'keys.get', doc: { summary: 'One of your keys' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return keyDetailsView(await ownerKeys.get(principalOf(request).user.id, id));
  });

  app.patch('/api/v1/keys/:id', { config: { auth: 'user', name: 'keys.update', doc: { summary: 'Change a key\'s name, limits, models, expiry or state', body: keyPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(keyPatch, request.body ?? {});
    return keyDetailsView(await ownerKeys.update(principalOf(request).user.id, id, keyChangesOf(body), userActor(request)));
  });

  app.delete('/api/v1/keys/:id', { config: { auth: 'user', name: 'keys.revoke', doc: { summary: 'Revoke a key', response: deletedResponse } } }, async (request) => {
    const { id } = request.params as { id: string };
    await ownerKeys.revoke(principalOf(request).user.id, id, userActor(request));
    return { id, object: 'key', deleted: true };
  });
}
