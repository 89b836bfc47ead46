import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, unauthorized } from '../../core/errors.ts';
import type { KeysService } from '../../features/keys/keys-service.ts';
import type { Clock } from '../../lib/clock.ts';
import { FailureLimiter } from '../../lib/failure-limiter.ts';
import { constantTimeEqual, sha256Hex } from '../../lib/hashing.ts';
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

/** Wrong admin tokens (a missing one is no guess) allowed per client address and minute; then 429 until the minute ends. */
const ADMIN_GUESSES_PER_MINUTE = 10;

/**
 * Checks the admin token against its stored SHA-256 hash, in constant time. An address that guessed wrong too often is refused
 * (429) until its window ends, whatever it sends: answering a right guess from it would let guessing go on at full speed.
 */
function checkAdminToken(request: FastifyRequest, reply: FastifyReply, text: string | undefined, adminTokenHash: string, guesses: FailureLimiter): void {
  const waitMs = guesses.blockedFor(request.ip);
  if (waitMs > 0) {
    reply.header('retry-after', String(Math.ceil(waitMs / 1000)));
    throw new GatewayError('rate_limited', 'Too many wrong admin tokens from this address; try again later.', { codeA: 'rate_limit_exceeded' });
  }
  if (text && constantTimeEqual(sha256Hex(text), adminTokenHash)) return;
  if (text) guesses.fail(request.ip);
  throw new GatewayError('unauthorized', 'Unauthorized');
}

/** Checks the API key (or admin token, stored as its SHA-256 hex) before every handler, by route setting `auth`. */
export function registerAuth(app: FastifyInstance, keys: KeysService, adminTokenHash: string, limiter: RateLimiter, clock: Clock): void {
  const guesses = new FailureLimiter(clock, ADMIN_GUESSES_PER_MINUTE, 60_000);
  app.decorateRequest('apiKey', undefined);
  app.decorateRequest('trackStream', undefined);
  app.addHook('preHandler', async (request, reply) => {
    const mode = request.routeOptions.config?.auth ?? 'key';
    if (mode === 'none' || !request.routeOptions.url) return;
    const text = keyText(request);
    if (mode === 'admin') return checkAdminToken(request, reply, text, adminTokenHash, guesses);
    const key = text ? await keys.authenticate(text) : undefined;
    if (!key) throw unauthorized();
    request.apiKey = key;
    const keyTextOfRequest = text!;
    request.trackStream = (controller) => keys.trackStream(keyTextOfRequest, controller);
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
