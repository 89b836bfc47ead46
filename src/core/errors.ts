/**
 * The error catalogue: every error the gateway answers with has a stable code here, with its HTTP status, its
 * type in each error shape of SPEC 2.10 (A: chat-completions style, B: messages endpoint, C: media tasks). Whether a
 * vendor failure is worth another try is UpstreamError's to say (providers/upstream-error.ts). Errors are raised as GatewayError and rendered once, by the error plugin.
 */
export const ERROR_CATALOGUE = {
  unauthorized: { status: 401, typeA: 'unauthorized_request_error', typeB: 'authentication_error', codeC: 2 },
  invalid_request: { status: 400, typeA: 'invalid_request_error', typeB: 'invalid_request_error', codeC: 1 },
  unsupported_tool: { status: 400, typeA: 'invalid_request_error', typeB: 'invalid_request_error', codeC: 1 },
  insufficient_balance: { status: 402, typeA: 'insufficient_balance_error', typeB: 'billing_error', codeC: 4 },
  model_not_allowed: { status: 403, typeA: 'permission_error', typeB: 'permission_error', codeC: 5 },
  forbidden: { status: 403, typeA: 'permission_error', typeB: 'permission_error', codeC: 5 },
  model_not_found: { status: 404, typeA: 'invalid_request_error', typeB: 'not_found_error', codeC: 3 },
  not_found: { status: 404, typeA: 'invalid_request_error', typeB: 'not_found_error', codeC: 3 },
  method_not_allowed: { status: 405, typeA: 'invalid_request_error', typeB: 'invalid_request_error', codeC: 1 },
  conflict: { status: 409, typeA: 'invalid_request_error', typeB: 'invalid_request_error', codeC: 1 },
  model_deprecated: { status: 410, typeA: 'model_deprecated', typeB: 'invalid_request_error', codeC: 15 },
  body_too_large: { status: 413, typeA: 'invalid_request_error', typeB: 'request_too_large', codeC: 1 },
  unsupported_media_type: { status: 415, typeA: 'invalid_request_error', typeB: 'invalid_request_error', codeC: 1 },
  rate_limited: { status: 429, typeA: 'rate_limit_error', typeB: 'rate_limit_error', codeC: 6 },
  internal: { status: 500, typeA: 'server_error', typeB: 'api_error', codeC: 10 },
  upstream_error: { status: 502, typeA: 'upstream_error', typeB: 'api_error', codeC: 11 },
  unavailable: { status: 503, typeA: 'server_error', typeB: 'overloaded_error', codeC: 12 },
  upstream_timeout: { status: 504, typeA: 'timeout_error', typeB: 'timeout_error', codeC: 13 },
} as const satisfies Record<string, { status: number; typeA: string; typeB: string; codeC: number }>;

export type ErrorCode = keyof typeof ERROR_CATALOGUE;

/** The shapes of SPEC 2.10, plus the chat-bot API's `{ok: false, message}` (SPEC 4.1); each route declares the one it owes. */
export type ErrorShape = 'A' | 'B' | 'C' | 'bot';

export interface GatewayErrorOptions {
  param?: string | null;
  /** The `code` field of shape A; defaults to null, except for codes whose SPEC row fixes one. */
  codeA?: string | null;
  /** For shape C: the id the client asked for (`original_id`). */
  originalId?: string;
  /** A vendor answered with this status and body; it is passed on to the client unchanged. */
  passthrough?: { status: number; body: string; contentType: string };
  /** For 429: when the client may try again (rendered as `retry-after`, whole seconds). */
  retryAfterMs?: number;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly status: number;
  readonly param: string | null;
  readonly codeA: string | null;
  readonly originalId: string | undefined;
  readonly passthrough: GatewayErrorOptions['passthrough'];
  readonly retryAfterMs: number | undefined;

  constructor(readonly code: ErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.name = 'GatewayError';
    this.status = options.passthrough?.status ?? ERROR_CATALOGUE[code].status;
    this.param = options.param ?? null;
    this.codeA = options.codeA !== undefined ? options.codeA : null;
    this.originalId = options.originalId;
    this.passthrough = options.passthrough;
    this.retryAfterMs = options.retryAfterMs;
  }
}

export const unauthorized = (): GatewayError => new GatewayError('unauthorized', 'Unauthorized');

/** 400 in the form SPEC asks for: `<param>: <constraint text>`. */
export const invalidParam = (param: string, constraint: string): GatewayError =>
  new GatewayError('invalid_request', `${param}: ${constraint}`, { param });

export function modelDeprecated(requested: string, retiredAt: string): GatewayError {
  return new GatewayError(
    'model_deprecated',
    `The model '${requested}' was retired on ${retiredAt} and has no analogue; choose another model from /v1/models.`,
    { param: 'model', codeA: 'model_deprecated', originalId: requested },
  );
}

export interface ErrorBodyA {
  error: { message: string; type: string; param: string | null; code: string | null };
}
export interface ErrorBodyB {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}
export interface ErrorBodyC {
  code: number;
  message: string;
  original_id: string;
}

export function renderErrorA(error: GatewayError): ErrorBodyA {
  return { error: { message: error.message, type: ERROR_CATALOGUE[error.code].typeA, param: error.param, code: error.codeA } };
}

export function renderErrorB(error: GatewayError, requestId?: string): ErrorBodyB {
  const body: ErrorBodyB = { type: 'error', error: { type: ERROR_CATALOGUE[error.code].typeB, message: error.message } };
  if (requestId) body.request_id = requestId;
  return body;
}

export function renderErrorC(error: GatewayError): ErrorBodyC {
  return { code: ERROR_CATALOGUE[error.code].codeC, message: error.message, original_id: error.originalId ?? '' };
}

export function renderError(error: GatewayError, shape: ErrorShape, requestId?: string): ErrorBodyA | ErrorBodyB | ErrorBodyC | { ok: false; message: string } {
  if (shape === 'bot') return { ok: false, message: error.message };
  if (shape === 'B') return renderErrorB(error, requestId);
  if (shape === 'C') return renderErrorC(error);
  return renderErrorA(error);
}
