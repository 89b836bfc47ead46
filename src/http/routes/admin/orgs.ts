import type { FastifyInstance } from 'fastify';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Org } from '../../../features/accounts/accounts.ts';
import type { DirectoryService } from '../../../features/accounts/directory-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import { adminActor } from '../../actors.ts';
import { listOf, listQuery } from './admin-schemas.ts';

export const orgView = (org: Org) => ({ id: org.id, name: org.name, ownerId: org.ownerId, balance: formatMoney(org.balance), promptCaching: org.promptCaching });

/** GET /admin/v1/orgs (list), GET and DELETE /admin/v1/orgs/:id, GET /admin/v1/orgs/:id/members (DESIGN §4). */
export function registerOrgRoutes(app: FastifyInstance, directory: DirectoryService): void {
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
}
