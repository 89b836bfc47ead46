import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { UsageService } from '../../../features/usage/usage-service.ts';
import type { RouteDoc } from '../../route-doc.ts';
import { adminUsageQuerySchema, queryOf, requestsQuerySchema, requestView, usageView } from '../management/usage-schemas.ts';

const accountFilter = { userId: z.string().min(1).optional() };
const adminRequestsQuery = requestsQuerySchema.extend(accountFilter);

/** GET /admin/v1/requests and /admin/v1/usage: every account's request log and usage, filtered by userId or orgId. */
export function registerAdminUsageRoutes(app: FastifyInstance, usage: UsageService): void {
  const settings = (name: string, doc: RouteDoc) => ({ config: { auth: 'admin' as const, name, doc } });
  app.get('/admin/v1/requests', settings('admin GET /admin/v1/requests', { summary: 'Every account\'s request log', query: adminRequestsQuery, list: true }), async (request) => {
    const query = parseOrThrow(adminRequestsQuery, queryOf(request.query));
    const page = await usage.adminRequests(query);
    return { object: 'list', data: page.data.map(requestView), next_cursor: page.nextCursor };
  });
  app.get('/admin/v1/usage', settings('admin GET /admin/v1/usage', { summary: 'Every account\'s usage by day', query: adminUsageQuerySchema, list: true }), async (request) => {
    const query = parseOrThrow(adminUsageQuerySchema, queryOf(request.query));
    return { object: 'list', data: (await usage.adminUsage(query)).map(usageView) };
  });
}
