import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../lib/metrics.ts';

export function registerHealthRoutes(app: FastifyInstance, metrics: Metrics): void {
  app.get('/healthz', { config: { auth: 'none', name: 'healthz' } }, async () => ({ ok: true }));
  app.get('/metrics', { config: { auth: 'none', name: 'metrics' } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
