import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { levels } from 'pino';
import type { Metrics } from '../../lib/metrics.ts';

/** The model a JSON body names, for the access log (the body itself is never logged). */
function modelOf(request: FastifyRequest): string | undefined {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return undefined;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model.slice(0, 200) : undefined;
}

/**
 * `x-request-id` on every response; for every request, counts and latencies for /metrics and one access-log line
 * (request id, key id, route, status, latency, model — never keys or bodies).
 */
export function registerObservability(app: FastifyInstance, metrics: Metrics, activity: { requests: number }): void {
  app.decorateRequest('startedAt', 0n);
  // Labelled children are looked up once per route and status: prom-client hashes a label object on every plain call.
  const counters = new Map<string, { inc(): void }>();
  const timers = new Map<string, { observe(value: number): void }>();
  // Decided once: building the line's object for a silenced logger would cost on the hot path for nothing.
  const accessLog = (levels.values[app.log.level] ?? Number.POSITIVE_INFINITY) <= levels.values.info!;

  const finish = (request: FastifyRequest, reply: FastifyReply): void => {
    const route = request.routeOptions.config?.name ?? request.routeOptions.url ?? 'unmatched';
    const status = reply.statusCode;
    const counterKey = `${route} ${status}`;
    let counter = counters.get(counterKey);
    if (!counter) counters.set(counterKey, (counter = metrics.requests.labels(route, String(status))));
    counter.inc();
    let timer = timers.get(route);
    if (!timer) timers.set(route, (timer = metrics.latency.labels(route)));
    const seconds = Number(process.hrtime.bigint() - request.startedAt) / 1e9;
    timer.observe(seconds);
    activity.requests += 1;
    if (accessLog) {
      const aborted = !reply.raw.writableFinished;
      request.log.info(
        { keyId: request.apiKey?.id, route, status, latencyMs: Math.round(seconds * 1e6) / 1e3, model: modelOf(request), ...(aborted ? { aborted } : {}) },
        'request',
      );
    }
  };

  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = process.hrtime.bigint();
    reply.header('x-request-id', request.id);
    // 'close' comes once for every response, finished or cut off. Fastify's onResponse never comes for a hijacked
    // stream whose client left, so streams would go uncounted (and the idle collector would never run after them).
    reply.raw.once('close', () => finish(request, reply));
    done();
  });
}
