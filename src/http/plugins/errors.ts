import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';
import { ERROR_CATALOGUE, GatewayError, renderError, unauthorized, type ErrorShape } from '../../core/errors.ts';
import { validationError } from '../../dialects/validation.ts';
import { UpstreamError, toGatewayError } from '../../providers/upstream-error.ts';

/** Fastify's own errors (body parsing, limits) in catalogue terms. */
function fromFastify(error: FastifyError): GatewayError | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('body_too_large', 'body: exceeds the size limit');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new GatewayError('unsupported_media_type', 'content-type: must be application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_request', 'body: must not be empty', { param: 'body' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('invalid_request', 'body: is not valid JSON', { param: 'body' });
    default:
      break;
  }
  if (error instanceof SyntaxError || (error.statusCode === 400 && /JSON/i.test(error.message))) {
    return new GatewayError('invalid_request', 'body: is not valid JSON', { param: 'body' });
  }
  if (error.validation) return new GatewayError('invalid_request', error.message);
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new GatewayError(error.statusCode === 404 ? 'not_found' : error.statusCode === 413 ? 'body_too_large' : 'invalid_request', error.message);
  }
  return undefined;
}

export function toCatalogueError(error: unknown, passthrough: boolean): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof UpstreamError) return toGatewayError(error, passthrough);
  if (error instanceof ZodError) return validationError(error);
  if (error && typeof error === 'object' && 'code' in error) {
    const mapped = fromFastify(error as FastifyError);
    if (mapped) return mapped;
  }
  return new GatewayError('internal', 'The gateway failed to handle this request.', { cause: error });
}

/** Sends an error in the route's shape, with the request id; a vendor body passed through stays the vendor's bytes. */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: GatewayError): FastifyReply {
  // SPEC §5/§7: a missing or bad key is answered in shape A on every endpoint, the messages endpoint included.
  // The route context as it is now, not routeSettings' copy: `reply.callNotFound()` moves a request to the 404 route.
  const routeShape = request.errorShape ?? request.routeOptions.config?.errorShape ?? 'A';
  let shape: ErrorShape = error.code === 'unauthorized' && routeShape !== 'bot' ? 'A' : routeShape;
  // SPEC 2.10/§7: shape C is the retired-model answer of media creation and asynchronous transcription; their other errors are shape A.
  if (shape === 'C' && error.code !== 'model_deprecated') shape = 'A';
  // A client that retries a 401 (some coding tools do, for 90 s) only delays showing the user the real problem.
  if (error.status === 401) reply.header('x-should-retry', 'false');
  request.trace?.failed(ERROR_CATALOGUE[error.code].typeA);
  if (error.retryAfterMs !== undefined) reply.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfterMs / 1000))));
  if (error.passthrough) {
    return reply.code(error.passthrough.status).type(error.passthrough.contentType).send(error.passthrough.body);
  }
  return reply.code(error.status).type('application/json').send(renderError(error, shape, request.id));
}

/** The shape of an answer no route gave (no route matched, or the router refused the URL): Messages' paths answer shape B. */
const shapeOfPath = (url: string): ErrorShape => (url.startsWith('/v1/messages') ? 'B' : 'A');

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route runs — a URL that does not decode (`%zz`), a path
 * parameter longer than the router takes (100 characters) — answered as a 400 in the path's shape, not Fastify's own body.
 */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'path: a parameter is longer than 100 characters' : 'path: is not a valid URL';
  const gatewayError = new GatewayError('invalid_request', message, { param: 'path' });
  return reply.code(gatewayError.status).type('application/json').send(renderError(gatewayError, shapeOfPath(request.url), request.id));
}

/** Paths whose every route wants a key or the admin token. */
const AUTHENTICATED_PREFIX = /^\/(v1|api|admin)(\/|\?|$)/;

/** The one place errors are rendered (STYLE rule 6). */
export function registerErrorHandling(app: FastifyInstance): void {
  app.decorateRequest('errorShape', undefined);
  app.setErrorHandler((raw, request, reply) => {
    const error = toCatalogueError(raw, request.routeOptions.config?.upstreamPassthrough === true);
    if (error.status >= 500) request.log.error({ err: raw }, error.message);
    else request.log.debug({ code: error.code }, error.message);
    return sendError(request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    // Under the authenticated prefixes a caller without a credential learns only that one is needed (DESIGN §14).
    if (AUTHENTICATED_PREFIX.test(request.url) && !request.headers.authorization && !request.headers['x-api-key']) {
      return sendError(request, reply, unauthorized());
    }
    const error = new GatewayError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
    return reply.code(404).send(renderError(error, shapeOfPath(request.url), request.id));
  });
}
