import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError, unauthorized } from '../../core/errors.ts';
import type { AccountsService } from '../../features/accounts/accounts-service.ts';
import type { SessionsService } from '../../features/accounts/sessions-service.ts';
import type { KeysService } from '../../features/keys/keys-service.ts';
import { routeSettings, type Principal } from '../context.ts';
import type { Clock } from '../../lib/clock.ts';
import { FailureLimiter } from '../../lib/failure-limiter.ts';
import { constantTimeEqual, sha256Hex } from '../../lib/hashing.ts';

/** `Authorization: <key>` or `Authorization: Bearer <key>`; `x-api-key` where the route allows it. */
export function keyText(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.length > 0) {
    const text = header.startsWith('Bearer ') || header.startsWith('bearer ') ? header.slice(7) : header;
    return text.trim() || undefined;
  }
  if (routeSettings(request).apiKeyHeader) {
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

export const SESSION_COOKIE = 'tollgate_session';

/**
 * The session cookie's value, parsed when a route first asks: the cookie plugin runs without its per-request parsing hook
 * (app.ts), since the model endpoints, most of the gateway's traffic, never read a cookie.
 */
export function sessionToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined) return undefined;
  request.cookies ??= request.server.parseCookie(header);
  return request.cookies[SESSION_COOKIE];
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface AuthServices {
  keys: KeysService;
  sessions: SessionsService;
  accounts: Pick<AccountsService, 'getUser'>;
}

/**
 * The management API's caller: a management key (Authorization) or a signed-in session (cookie). A session's state-changing
 * request must carry its CSRF token (`x-csrf-token`), so another site cannot make a signed-in browser act.
 */
async function principalOf(request: FastifyRequest, services: AuthServices, text: string | undefined): Promise<Principal> {
  if (text !== undefined) {
    const key = await services.keys.authenticate(text);
    if (!key) throw unauthorized();
    if (key.scope !== 'management') {
      throw new GatewayError('forbidden', 'This API key has the inference scope; the management API needs a management key or a signed-in session.', { codeA: 'wrong_key_scope' });
    }
    const user = await services.accounts.getUser(key.userId);
    if (!user) throw unauthorized();
    request.apiKey = key;
    await services.keys.admit(key);
    return { user, via: 'key', keyId: key.id, session: undefined };
  }
  const token = sessionToken(request);
  const signedIn = token ? await services.sessions.authenticate(token) : undefined;
  if (!signedIn) throw unauthorized();
  if (!SAFE_METHODS.has(request.method)) {
    const header = request.headers['x-csrf-token'];
    if (!services.sessions.csrfMatches(signedIn.session, typeof header === 'string' ? header : undefined)) {
      throw new GatewayError('forbidden', 'x-csrf-token: missing or wrong (GET /api/v1/auth/session gives it)', { param: 'x-csrf-token', codeA: 'csrf_failed' });
    }
  }
  return { user: signedIn.user, via: 'session', keyId: null, session: signedIn.session };
}

/** Checks the API key, session or admin token (stored as its SHA-256 hex) before every handler, by route setting `auth`. */
export function registerAuth(app: FastifyInstance, services: AuthServices, adminTokenHash: string, clock: Clock): void {
  const { keys } = services;
  const guesses = new FailureLimiter(clock, ADMIN_GUESSES_PER_MINUTE, 60_000);
  app.decorateRequest('apiKey', undefined);
  app.decorateRequest('principal', undefined);
  app.decorateRequest('trackStream', undefined);
  app.addHook('preHandler', async (request, reply) => {
    const settings = routeSettings(request);
    const mode = settings.auth ?? 'key';
    if (mode === 'none' || !settings.url) return;
    const text = keyText(request);
    if (mode === 'admin') {
      // The admin token (scripts, the CLI) or an operator's signed-in session (the console's operator pages, DESIGN §11).
      if (text !== undefined || sessionToken(request) === undefined) return checkAdminToken(request, reply, text, adminTokenHash, guesses);
      const principal = await principalOf(request, services, undefined);
      if (!principal.user.operator) {
        throw new GatewayError('forbidden', 'The admin API needs the admin token or an operator\'s session.', { codeA: 'operator_only' });
      }
      request.principal = principal;
      return;
    }
    if (mode === 'user' || (mode === 'optionalUser' && (text !== undefined || sessionToken(request) !== undefined))) {
      request.principal = await principalOf(request, services, text);
      return;
    }
    if (mode === 'optionalUser') return;
    // The key's cache and counters answer without a promise on almost every request: nothing is awaited that need not be.
    let found = text ? keys.authenticateText(text) : undefined;
    if (found instanceof Promise) found = await found;
    if (!found) throw unauthorized();
    const { key, hash } = found;
    if (mode === 'key' && key.scope !== 'inference') {
      throw new GatewayError('forbidden', 'This API key has the management scope; it can call only the management API (/api/v1).', { codeA: 'wrong_key_scope' });
    }
    request.apiKey = key;
    request.trackStream = (controller) => keys.trackStream(hash, controller);
    // Every authenticated call counts against the key's per-minute limits, count_tokens and free endpoints included.
    const admitted = keys.admit(key);
    if (admitted) await admitted;
  });
}
