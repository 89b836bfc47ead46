import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { AuditService } from '../../../features/audit/audit-service.ts';
import type { AuditEntry } from '../../../features/audit/audit.ts';
import { listOf } from './admin-schemas.ts';

const id = z.string().min(1).max(200);
export const auditQuery = z.object({
  actorId: id.optional(),
  action: id.optional(),
  targetId: id.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(400).refine((cursor) => /^\d+:.+$/.test(Buffer.from(cursor, 'base64url').toString('utf8')), { message: 'is not a cursor from a previous page' }).optional(),
});

const adminAuditQuery = auditQuery.extend({ orgId: id.optional() });

/** An audit entry as the operator and org owners see it. */
export const auditView = (entry: AuditEntry) => ({
  id: entry.id,
  at: new Date(entry.at).toISOString(),
  actor: entry.actor,
  action: entry.action,
  target: entry.target,
  before: entry.before,
  after: entry.after,
  orgId: entry.orgId,
});

/** GET /admin/v1/audit?actorId=&action=&targetId=&orgId=&limit=&cursor= (DESIGN §4): every admin, operator and org-owner action. */
export function registerAuditRoutes(app: FastifyInstance, audit: AuditService): void {
  app.get('/admin/v1/audit', { config: { doc: { summary: 'The audit log: every admin, operator and org-owner action', query: adminAuditQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(adminAuditQuery, request.query);
    const page = await audit.list(Object.fromEntries(Object.entries(query).filter(([, value]) => value !== undefined)) as typeof query);
    return listOf(page.entries.map(auditView), page.nextCursor);
  });
}
