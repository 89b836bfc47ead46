import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { levels } from 'pino';
import type { RequestLog } from '../../features/usage/request-log-writer.ts';
import type { Activity } from '../../lib/idle-gc.ts';
import type { HistogramSeries, Metrics, Tally } from '../../lib/metrics.ts';
import { formatMoney } from '../../lib/money.ts';
import { routeSettings } from '../context.ts';

/** The model a JSON body names, for the access log and the request log (the body itself is never logged). */
function modelOf(request: FastifyRequest): string | undefined {
  const body = request.body;
  if (typeof body !== 'object' || body === null) return undefined;
  const model = (body as { model?: unknown }).model;
  return typeof model === 'string' ? model.slice(0, 200) : undefined;
}

/** Nginx's "client closed request": the client left before any answer was sent. */
const CLIENT_CLOSED = 499;

/**
 * `x-request-id` on every response; for every request, counts and latencies for /metrics, one access-log line
 * (request id, key id, route, status, latency, model — never keys or bodies), and its request-log trace: opened here,
 * held while the handler runs (a stream's charge is booked when its relay ends, which may be after the close), closed with
 * the response. Billed non-stream answers carry `x-tollgate-cost`.
 */
export function registerObservability(app: FastifyInstance, metrics: Metrics, activity: Activity, requestLog: RequestLog): void {
  app.decorateRequest('startedAt', 0n);
  app.decorateRequest('trace', undefined);
  app.decorateRequest('settings', undefined);
  // Series are looked up once per route and status (the request counter is a TalliedCounter: a plain number per series).
  const counters = new Map<string, Tally>();
  const timers = new Map<string, HistogramSeries>();
  // Decided once: building the line's object for a silenced logger would cost on the hot path for nothing.
  const accessLog = (levels.values[app.log.level] ?? Number.POSITIVE_INFINITY) <= levels.values.info!;

  const finish = (request: FastifyRequest, reply: FastifyReply): void => {
    const settings = routeSettings(request);
    const route = settings.name ?? settings.url ?? 'unmatched';
    const status = reply.statusCode;
    const counterKey = `${route} ${status}`;
    let counter = counters.get(counterKey);
    if (!counter) counters.set(counterKey, (counter = metrics.requests.series(route, String(status))));
    counter.value += 1;
    let timer = timers.get(route);
    if (!timer) timers.set(route, (timer = metrics.latency.labels(route)));
    const seconds = Number(process.hrtime.bigint() - request.startedAt) / 1e9;
    timer.observe(seconds);
    activity.requests += 1;
    const aborted = !reply.raw.writableFinished;
    if (accessLog) {
      request.log.info(
        { keyId: request.apiKey?.id, route, status, latencyMs: Math.round(seconds * 1e6) / 1e3, model: modelOf(request), ...(aborted ? { aborted } : {}) },
        'request',
      );
    }
    const trace = request.trace;
    if (!trace) return;
    if (aborted) trace.failed('client_closed');
    // Only the model endpoints' keys are logged: management keys and sessions act on the account, they do not use models —
    // unless a management request spends (a knowledge document's embeddings), which it logs under its spender.
    const logged = request.apiKey !== undefined && (settings.auth ?? 'key') === 'key';
    trace.close({
      key: logged ? request.apiKey : trace.spender,
      endpoint: route,
      bodyModel: logged ? modelOf(request) : undefined,
      status: reply.raw.headersSent ? status : CLIENT_CLOSED,
      latencyMs: Math.round(seconds * 1000),
    });
  };

  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = process.hrtime.bigint();
    activity.started += 1;
    request.trace = requestLog.begin(request.id, performance.now());
    reply.header('x-request-id', request.id);
    // 'close' comes once for every response, finished or cut off. Fastify's onResponse never comes for a hijacked
    // stream whose client left, so streams would go uncounted (and the idle collector would never run after them).
    // `on`, not `once`: the event comes once anyway, and `once` wraps every listener in a bound function of its own.
    reply.raw.on('close', () => finish(request, reply));
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    const trace = request.trace;
    if (trace?.billed && reply.statusCode < 400) reply.header('x-tollgate-cost', formatMoney(trace.cost));
    done(null, payload);
  });

  // The handler holds its trace until it returns: a non-stream call runs to its end (and is charged) even when its client
  // left, and a stream's relay books in a `finally` that the handler awaits.
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function held(this: FastifyInstance, request, reply) {
      const trace = request.trace;
      trace?.hold();
      try {
        return await handler.call(this, request, reply);
      } finally {
        trace?.release();
      }
    } as RouteHandlerMethod;
  });
}
