import type { FastifyInstance } from 'fastify';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { UsageService } from '../../../features/usage/usage-service.ts';
import { principalOf } from './me.ts';
import { ledgerQuerySchema, ledgerView, queryOf, requestsQuerySchema, requestView, usageQuerySchema, usageView } from './usage-schemas.ts';

/** GET /api/v1/requests, /api/v1/usage and /api/v1/ledger (DESIGN §10): the request log, its rollups and the ledger. */
export function registerUsageRoutes(app: FastifyInstance, usage: UsageService): void {
  app.get('/api/v1/requests', { config: { auth: 'user', name: 'requests.list', doc: { summary: 'Your request log', query: requestsQuerySchema, list: true } } }, async (request) => {
    const query = parseOrThrow(requestsQuerySchema, queryOf(request.query));
    const page = await usage.requests(principalOf(request).user.id, query);
    return { object: 'list', data: page.data.map(requestView), next_cursor: page.nextCursor };
  });

  app.get('/api/v1/usage', { config: { auth: 'user', name: 'usage', doc: { summary: 'Your usage by day (and model, key, …)', query: usageQuerySchema, list: true } } }, async (request) => {
    const query = parseOrThrow(usageQuerySchema, queryOf(request.query));
    const rows = await usage.usage(principalOf(request).user.id, query);
    return { object: 'list', data: rows.map(usageView) };
  });

  app.get('/api/v1/ledger', { config: { auth: 'user', name: 'ledger.list', doc: { summary: 'Your balance ledger', query: ledgerQuerySchema, list: true } } }, async (request) => {
    const query = parseOrThrow(ledgerQuerySchema, queryOf(request.query));
    const page = await usage.ledgerPage(principalOf(request).user.id, query);
    return { object: 'list', data: page.data.map(ledgerView), next_cursor: page.nextCursor };
  });
}
