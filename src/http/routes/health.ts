import type { FastifyInstance } from 'fastify';
import type { ReadinessService } from '../../features/health/readiness-service.ts';
import type { Metrics } from '../../lib/metrics.ts';

/** Liveness, readiness (DESIGN §14) and Prometheus metrics. */
export function registerHealthRoutes(app: FastifyInstance, metrics: Metrics, readiness: ReadinessService): void {
  app.get('/healthz', { config: { auth: 'none', name: 'healthz' } }, async () => ({ ok: true }));
  app.get('/readyz', { config: { auth: 'none', name: 'readyz' } }, async (_request, reply) => {
    const result = await readiness.check();
    return reply.code(result.ready ? 200 : 503).send(result);
  });
  app.get('/metrics', { config: { auth: 'none', name: 'metrics' } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
