import type { FastifyInstance } from 'fastify';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Org } from '../../../features/accounts/accounts.ts';
import type { DirectoryService } from '../../../features/accounts/directory-service.ts';
import type { OrgsService } from '../../../features/accounts/orgs-service.ts';
import { z } from 'zod';
import { formatMoney } from '../../../lib/money.ts';
import { adminActor } from '../../actors.ts';
import { listOf, listQuery } from './admin-schemas.ts';

const rolePatch = z.object({ role: z.enum(['owner', 'admin', 'member']) });

export const orgView = (org: Org) => ({ id: org.id, name: org.name, ownerId: org.ownerId, balance: formatMoney(org.balance), promptCaching: org.promptCaching });

/**
 * GET /admin/v1/orgs (list), GET and DELETE /admin/v1/orgs/:id, GET /admin/v1/orgs/:id/members, PATCH and DELETE
 * /admin/v1/orgs/:id/members/:userId (DESIGN §4): the owners' rule that an org keeps its last owner holds here too (409).
 */
export function registerOrgRoutes(app: FastifyInstance, services: { directory: DirectoryService; orgs: OrgsService }): void {
  const { directory, orgs } = services;
  app.get('/admin/v1/orgs', { config: { doc: { summary: 'List orgs', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const page = await directory.listOrgs({ limit: query.limit, ...(query.query ? { query: query.query } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) });
    return listOf(page.orgs.map(orgView), page.nextCursor);
  });

  app.get('/admin/v1/orgs/:id', { config: { doc: { summary: 'One org' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const org = await directory.org(id);
    return { ...orgView(org), members: org.members };
  });

  app.get('/admin/v1/orgs/:id/members', { config: { doc: { summary: 'An org\'s members', list: true } } }, async (request) => {
    const { id } = request.params as { id: string };
    return listOf(await directory.members(id), undefined);
  });

  app.delete('/admin/v1/orgs/:id', { config: { doc: { summary: 'Delete an org' } } }, async (request) => {
    const { id } = request.params as { id: string };
    await directory.deleteOrg(id, adminActor(request));
    return { ok: true };
  });

  app.patch('/admin/v1/orgs/:id/members/:userId', async (request) => {
    const { id, userId } = request.params as { id: string; userId: string };
    const body = parseOrThrow(rolePatch, request.body ?? {});
    return await orgs.operatorChangeRole(adminActor(request), id, userId, body.role);
  });

  app.delete('/admin/v1/orgs/:id/members/:userId', async (request) => {
    const { id, userId } = request.params as { id: string; userId: string };
    return { ...(await orgs.operatorRemoveMember(adminActor(request), id, userId)), deleted: true };
  });
}
