import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../lib/metrics.ts';

/** `x-request-id` on every response, and request counts and latencies for /metrics. */
export function registerObservability(app: FastifyInstance, metrics: Metrics, activity: { requests: number }): void {
  app.decorateRequest('startedAt', 0n);
  app.addHook('onRequest', async (request, reply) => {
    request.startedAt = process.hrtime.bigint();
    reply.header('x-request-id', request.id);
  });
  // Labelled children are looked up once per route and status: prom-client hashes a label object on every plain call.
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(value: number): void }>();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.config?.name ?? request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const counterKey = `${route} ${status}`;
    let counter = counters.get(counterKey);
    if (!counter) counters.set(counterKey, (counter = metrics.requests.labels(route, String(status))));
    counter.inc();
    let timer = timers.get(route);
    if (!timer) timers.set(route, (timer = metrics.latency.labels(route)));
    timer.observe(Number(process.hrtime.bigint() - request.startedAt) / 1e9);
    activity.requests += 1;
  });
}
