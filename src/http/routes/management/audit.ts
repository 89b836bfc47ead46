import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import type { AuditService } from '../../../features/audit/audit-service.ts';
import { auditQuery, auditView } from '../admin/audit.ts';
import { listOf } from '../admin/admin-schemas.ts';
import { principalOf } from './me.ts';

/** GET /api/v1/orgs/:id/audit: an org's owners and admins read what was done to it (a member → 403, others → 404). */
export function registerOrgAuditRoute(app: FastifyInstance, services: { accounts: AccountsService; audit: AuditService }): void {
  app.get('/api/v1/orgs/:id/audit', { config: { auth: 'user', name: 'orgs.audit', doc: { summary: 'An org\'s audit log (owners and admins)', query: auditQuery, list: true } } }, async (request) => {
    const { id } = request.params as { id: string };
    const { user } = principalOf(request);
    const role = await services.accounts.getRole(id, user.id);
    if (!role) throw new GatewayError('not_found', `Organization '${id}' does not exist.`);
    if (role === 'member') throw new GatewayError('forbidden', 'Only an owner or admin of the organization may read its audit log.');
    const query = parseOrThrow(auditQuery, request.query);
    const page = await services.audit.list({ ...(Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as typeof query), orgId: id });
    return listOf(page.entries.map(auditView), page.nextCursor);
  });
}
