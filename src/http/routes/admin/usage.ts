import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { UsageService } from '../../../features/usage/usage-service.ts';
import { adminUsageQuerySchema, queryOf, requestsQuerySchema, requestView, usageView } from '../management/usage-schemas.ts';

const accountFilter = { userId: z.string().min(1).optional() };

/** GET /admin/v1/requests and /admin/v1/usage: every account's request log and usage, filtered by userId or orgId. */
export function registerAdminUsageRoutes(app: FastifyInstance, usage: UsageService): void {
  const settings = (name: string) => ({ config: { auth: 'admin' as const, name } });
  app.get('/admin/v1/requests', settings('admin GET /admin/v1/requests'), async (request) => {
    const query = parseOrThrow(requestsQuerySchema.extend(accountFilter), queryOf(request.query));
    const page = await usage.adminRequests(query);
    return { object: 'list', data: page.data.map(requestView), next_cursor: page.nextCursor };
  });
  app.get('/admin/v1/usage', settings('admin GET /admin/v1/usage'), async (request) => {
    const query = parseOrThrow(adminUsageQuerySchema, queryOf(request.query));
    return { object: 'list', data: (await usage.adminUsage(query)).map(usageView) };
  });
}
