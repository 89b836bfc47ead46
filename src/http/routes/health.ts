import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ReadinessService } from '../../features/health/readiness-service.ts';
import type { Metrics } from '../../lib/metrics.ts';
import { unauthorized } from '../../core/errors.ts';
import { constantTimeEqual } from '../../lib/hashing.ts';
import { keyText } from '../plugins/auth.ts';

/** Liveness, readiness (DESIGN §14) and Prometheus metrics. */
export function registerHealthRoutes(app: FastifyInstance, metrics: Metrics, readiness: ReadinessService, metricsToken: string | undefined): void {
  app.get('/healthz', { config: { auth: 'none', name: 'healthz', doc: { summary: 'Liveness: the process answers', response: z.object({ ok: z.literal(true) }) } } }, async () => ({ ok: true }));
  app.get('/readyz', { config: { auth: 'none', name: 'readyz', doc: { summary: 'Readiness: database, Redis, ledger and request log (503 when not ready)' } } }, async (_request, reply) => {
    const result = await readiness.check();
    return reply.code(result.ready ? 200 : 503).send(result);
  });
  // Clients probe the root before they talk to the API.
  app.head('/', { config: { auth: 'none', name: 'root', doc: { summary: 'Root probe (clients check the gateway answers)' } } }, async (_request, reply) => reply.code(200).send());
  app.get('/metrics', { config: { auth: 'none', name: 'metrics', doc: { summary: 'Prometheus metrics', description: 'Open unless TOLLGATE_METRICS_TOKEN is set; then `Authorization: Bearer <token>`.', produces: 'text/plain' } } }, async (request, reply) => {
    if (metricsToken !== undefined) {
      const given = keyText(request);
      if (given === undefined || !constantTimeEqual(given, metricsToken)) throw unauthorized();
    }
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
