import type { FastifyInstance, FastifyRequest } from 'fastify';
import { GatewayError, unauthorized } from '../../core/errors.ts';
import type { KeysService } from '../../features/keys/keys-service.ts';
import { constantTimeEqual } from '../../lib/hashing.ts';
import type { RateLimiter } from '../../storage/rate-limiter.ts';

/** `Authorization: <key>` or `Authorization: Bearer <key>`; `x-api-key` where the route allows it. */
export function keyText(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.length > 0) {
    const text = header.startsWith('Bearer ') || header.startsWith('bearer ') ? header.slice(7) : header;
    return text.trim() || undefined;
  }
  if (request.routeOptions.config?.apiKeyHeader) {
    const alternative = request.headers['x-api-key'];
    if (typeof alternative === 'string' && alternative.length > 0) return alternative.trim();
  }
  return undefined;
}

/** Checks the API key (or admin token) before every handler, by route setting `auth`. */
export function registerAuth(app: FastifyInstance, keys: KeysService, adminToken: string, limiter: RateLimiter): void {
  app.decorateRequest('apiKey', undefined);
  app.addHook('preHandler', async (request, reply) => {
    const mode = request.routeOptions.config?.auth ?? 'key';
    if (mode === 'none' || !request.routeOptions.url) return;
    const text = keyText(request);
    if (mode === 'admin') {
      if (!text || !constantTimeEqual(text, adminToken)) throw new GatewayError('unauthorized', 'Unauthorized');
      return;
    }
    const key = text ? await keys.authenticate(text) : undefined;
    if (!key) throw unauthorized();
    request.apiKey = key;
    // Every authenticated call counts, count_tokens and free endpoints included.
    if (key.rateLimit !== null) {
      const decision = await limiter.take(key.id, key.rateLimit);
      if (!decision.allowed) {
        reply.header('retry-after', String(Math.ceil(decision.retryAfterMs / 1000)));
        throw new GatewayError('rate_limited', `Rate limit of ${key.rateLimit} requests per minute reached for this API key.`, { codeA: 'rate_limit_exceeded' });
      }
    }
  });
}
