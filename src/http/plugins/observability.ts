import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../lib/metrics.ts';

/** `x-request-id` on every response, and request counts and latencies for /metrics. */
export function registerObservability(app: FastifyInstance, metrics: Metrics, activity: { requests: number }): void {
  app.decorateRequest('startedAt', 0n);
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = process.hrtime.bigint();
    reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.config?.name ?? request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, status: String(reply.statusCode) });
    activity.requests += 1;
    metrics.latency.observe({ route }, Number(process.hrtime.bigint() - request.startedAt) / 1e9);
  });
}
