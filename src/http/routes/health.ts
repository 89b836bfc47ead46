import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { auth: 'none', name: 'healthz' } }, async () => ({ ok: true }));
  app.get('/readyz', { config: { auth: 'none', name: 'readyz' } }, async (_request, reply) => {
    const readiness = await services.readiness.check();
    return reply.code(readiness.ready ? 200 : 503).send(readiness);
  });
  app.get('/metrics', { config: { auth: 'none', name: 'metrics' } }, async (_request, reply) => {
    reply.type(services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
  });
}
