import type { FastifyRequest } from 'fastify';
import type { ErrorShape } from '../core/errors.ts';
import type { User } from '../features/accounts/accounts.ts';
import type { Session } from '../features/accounts/sessions.ts';
import type { ApiKey } from '../features/keys/keys.ts';
import type { RequestTrace } from '../features/usage/request-trace.ts';
import type { Abortable } from '../lib/call-abort.ts';
import type { ClientBody } from '../lib/json-depth.ts';
import type { RouteDoc } from './route-doc.ts';

/** Per-route settings read by the plugins. */
export interface RouteSettings {
  /** Which error shape of SPEC 2.10 this route owes (default A). */
  errorShape?: ErrorShape;
  /**
   * `key`: an inference-scope API key (the model endpoints; default); `user`: a signed-in session or a management-scope key
   * (the management API; sets `principal`); `optionalUser`: like `user` when a credential is sent, public otherwise (accepting
   * an invitation signed in or as someone new); `anyKey`: an API key of either scope; `admin`: the admin token, or an operator's
   * signed-in session (cookie + `x-csrf-token`; sets `principal`); `none`: public.
   */
  auth?: 'key' | 'user' | 'optionalUser' | 'anyKey' | 'admin' | 'none';
  /** Also read the key from `x-api-key` (the messages endpoint). */
  apiKeyHeader?: boolean;
  /** Vendor 4xx bodies are in this route's own format and may be passed on unchanged. */
  upstreamPassthrough?: boolean;
  /** The JSON parser keeps the body's bytes for the handler (`bodyBytes`: a request the vendor may get as it came). */
  keepsBodyBytes?: boolean;
  /** Label for metrics. */
  name?: string;
  /** What GET /openapi.json says about the route (every route has one; test/openapi.test.ts checks). */
  doc?: RouteDoc;
}

/** Who calls the management API: a signed-in user (session) or a management key's owner. */
export interface Principal {
  user: User;
  via: 'session' | 'key';
  /** The management key used, if any. */
  keyId: string | null;
  session: Session | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteSettings {}
  interface FastifyRequest {
    apiKey: ApiKey | undefined;
    /** Set for `user` routes. */
    principal: Principal | undefined;
    /** Set by a handler whose error shape depends on the request (asynchronous transcription answers in shape C). */
    errorShape: ErrorShape | undefined;
    startedAt: bigint;
    /** What the request did, for the request log and `x-tollgate-cost` (set for every request by the observability plugin). */
    trace: RequestTrace | undefined;
    /** Set by the auth plugin for a request made with an API key: tracks a stream so revoking the key cuts it. */
    trackStream: ((controller: Abortable) => () => void) | undefined;
    /** `routeSettings`' copy. */
    settings: RouteConfig | undefined;
    /**
     * A JSON body's bytes as they came, on routes with `keepsBodyBytes` (app.ts's parser): sent on unchanged where nothing in
     * it needs changing. The handler takes them (`takeClientBody`), so a long stream does not hold them.
     */
    bodyBytes: Buffer | undefined;
    /** Keys the JSON body's text wrote, at every depth, a key written twice counted twice (lib/json-depth.ts `jsonShape`). */
    bodyKeys: number;
  }
}

type RouteConfig = FastifyRequest['routeOptions']['config'];
/** What a request outside any route (Fastify's own errors before routing) reads: no settings, no url. */
const NO_SETTINGS = Object.freeze({}) as RouteConfig;

/**
 * The route's settings (and its `url`, undefined when no route matched). Fastify's `request.routeOptions` builds a new object
 * of thirteen fields at every read, and the plugins read the settings several times a request: this reads them once.
 */
export function routeSettings(request: FastifyRequest): RouteConfig {
  return (request.settings ??= request.routeOptions.config ?? NO_SETTINGS);
}

/**
 * The parsed JSON body, taken by the handler: the request keeps only the model it names (the access log and the request
 * log read it there), so the request does not hold a long conversation's parsed text while the vendor answers. Held across
 * a call, it is copied by every scavenge of the young generation and then promoted (issue 16).
 */
export function takeBody(request: FastifyRequest): unknown {
  const body = request.body;
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  request.body = typeof model === 'string' ? { model } : undefined;
  return body;
}

/**
 * The body as the client sent it, kept for the handler (`keepsBodyBytes`) and let go of by the request: the caller holds
 * it as long as it needs. Sent on with `bytesIfSameKeys` (lib/json-depth.ts).
 */
export function takeClientBody(request: FastifyRequest): ClientBody | undefined {
  const bytes = request.bodyBytes;
  if (bytes === undefined) return undefined;
  request.bodyBytes = undefined;
  return { bytes, keys: request.bodyKeys };
}
