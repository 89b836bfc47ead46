/**
 * The console's one client of the management API (DESIGN §10). It calls only /api/v1 (and the public catalog), with the
 * session cookie the browser holds and, on every state-changing call, the session's CSRF token.
 */

/** An error answer of the API (shape A), kept whole so each page shows it where it happened. */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string | undefined;
  readonly code: string | undefined;
  readonly param: string | undefined;

  constructor(status: number, message: string, details: { type?: string; code?: string; param?: string } = {}) {
    super(message);
    this.status = status;
    this.type = details.type;
    this.code = details.code;
    this.param = details.param;
  }
}

let csrfToken: string | undefined;

/** Remembers the CSRF token of the signed-in session (from login, sign-up or GET /auth/session). */
export function rememberCsrf(token: string | undefined): void {
  csrfToken = token;
}

const SAFE = new Set(['GET', 'HEAD']);

/**
 * Sends a call as `api` does and returns the response once the gateway has answered well (a stream's body is still open).
 * `extraHeaders`: e.g. the admin API's `Idempotency-Key`.
 */
export async function apiResponse(method: string, path: string, body?: unknown, accept = 'application/json', extraHeaders: Record<string, string> = {}): Promise<Response> {
  const headers: Record<string, string> = { ...extraHeaders, accept };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (!SAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(path, { method, headers, credentials: 'same-origin', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  } catch {
    throw new ApiError(0, 'The gateway did not answer. Check your connection and try again.');
  }
  if (!response.ok) throw errorOf(response.status, await response.text());
  return response;
}

/** The API's error answer (shape A) as an ApiError; any other body still gives the status. */
function errorOf(status: number, text: string): ApiError {
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  const error = (parsed as { error?: { message?: string; type?: string; code?: string; param?: string } } | undefined)?.error;
  return new ApiError(status, error?.message ?? `The gateway answered ${status}.`, {
    ...(error?.type ? { type: error.type } : {}),
    ...(error?.code ? { code: error.code } : {}),
    ...(error?.param ? { param: error.param } : {}),
  });
}

/** `headers`: extra request headers, e.g. the admin API's `Idempotency-Key`. */
export async function api<T>(method: string, path: string, body?: unknown, options: { headers?: Record<string, string> } = {}): Promise<T> {
  const response = await apiResponse(method, path, body, 'application/json', options.headers);
  const text = await response.text();
  try {
    return (text ? JSON.parse(text) : undefined) as T;
  } catch {
    return undefined as T;
  }
}

/** `?a=1&b=2` of the defined values. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}
