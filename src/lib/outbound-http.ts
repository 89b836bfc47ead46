import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch, request, type Dispatcher, type RequestInit } from 'undici';
import { isBlockedAddress, refuseUrl } from './url-guard.ts';

/**
 * The one way the gateway calls a URL a user gave it (task webhooks, bot outboxes, API functions, MCP servers): the URL is checked
 * first, and the address the connection is actually made to is checked again (a name that resolves to a private address by
 * then, DNS rebinding, is refused); redirects are never followed; a timeout and a response size limit bound every call.
 */

/** A user's URL that points, or resolves, to a private or loopback address (or is not an http(s) URL at all). */
export class RefusedUrlError extends Error {
  readonly code = 'EPRIVATEADDRESS';
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'RefusedUrlError';
  }
}

/** The receiver did not answer (headers and body) within the policy's time. */
export class OutboundTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'OutboundTimeoutError';
  }
}

export interface OutboundPolicy {
  /** Tests and demos may reach private addresses (TOLLGATE_ALLOW_PRIVATE_URLS). */
  allowPrivateUrls: boolean;
  timeoutMs: number;
  /** Response bytes read; reading stops there and the answer says it was cut. */
  maxResponseBytes: number;
}

export interface OutboundRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  body?: string;
  /** The caller's own cancellation (a client that went away). */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** False when the body was cut at `maxResponseBytes`. */
  complete: boolean;
}

/** Resolves like `dns.lookup` but fails when the host resolves to any private or loopback address. */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  lookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) {
      callback(error, '');
      return;
    }
    const first = addresses[0];
    if (!first || addresses.some((entry) => isBlockedAddress(entry.address))) {
      callback(new RefusedUrlError(`${hostname} resolves to a private or loopback address`), '');
      return;
    }
    if (options.all) callback(null, addresses);
    else callback(null, first.address, first.family);
  });
};

/** Connects through `publicOnlyLookup`; an IP-literal host (which no lookup sees, e.g. a redirect's target) is checked here. */
function publicOnlyConnector(): buildConnector.connector {
  const connect = buildConnector({ lookup: publicOnlyLookup });
  return (options, callback) => {
    const host = options.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && isBlockedAddress(host)) {
      callback(new RefusedUrlError(`${host} is a private or loopback address`), null);
      return;
    }
    connect(options, callback);
  };
}

let publicOnly: Agent | undefined;
let anyAddress: Agent | undefined;

/** The dispatcher for user-given URLs: public addresses only (checked where the connection is made) unless private ones are allowed. */
export function guardedDispatcher(allowPrivateUrls: boolean): Dispatcher {
  if (allowPrivateUrls) {
    anyAddress ??= new Agent();
    return anyAddress;
  }
  publicOnly ??= new Agent({ connect: publicOnlyConnector() });
  return publicOnly;
}

/** A fetch for clients that take one (the MCP SDK): guarded dispatcher, redirects refused. */
export function guardedFetch(allowPrivateUrls: boolean): (url: string | URL, init?: RequestInit) => ReturnType<typeof undiciFetch> {
  const dispatcher = guardedDispatcher(allowPrivateUrls);
  return (url, init) => undiciFetch(url, { ...init, redirect: 'error', dispatcher });
}

/** Reads at most `limit` bytes of a body, then stops reading (the connection is dropped, not drained). */
export async function readLimited(body: AsyncIterable<Uint8Array> & { destroy(): unknown }, limit: number): Promise<{ bytes: Buffer; complete: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const room = limit - size;
    if (chunk.length > room) {
      chunks.push(Buffer.from(chunk.subarray(0, room)));
      body.destroy();
      return { bytes: Buffer.concat(chunks), complete: false };
    }
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return { bytes: Buffer.concat(chunks), complete: true };
}

const refusal = (error: unknown): RefusedUrlError | undefined => {
  for (let cause = error; cause instanceof Error; cause = cause.cause) if (cause instanceof RefusedUrlError) return cause;
  return undefined;
};

/**
 * Sends one request to a user-given URL under `policy`. Throws RefusedUrlError (before or at connect), OutboundTimeoutError, or
 * the network error; a 3xx is returned as it is, never followed.
 */
export async function sendOutbound(url: string, outbound: OutboundRequest, policy: OutboundPolicy): Promise<OutboundResponse> {
  const refused = await refuseUrl(url, policy.allowPrivateUrls);
  if (refused) throw new RefusedUrlError(refused);
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  try {
    const response = await request(url, {
      method: outbound.method,
      ...(outbound.headers ? { headers: outbound.headers } : {}),
      ...(outbound.body !== undefined ? { body: outbound.body } : {}),
      signal: outbound.signal ? AbortSignal.any([timeout, outbound.signal]) : timeout,
      dispatcher: guardedDispatcher(policy.allowPrivateUrls),
    });
    const { bytes, complete } = await readLimited(response.body, policy.maxResponseBytes);
    return { status: response.statusCode, headers: response.headers, body: bytes, complete };
  } catch (error) {
    const refusedAtConnect = refusal(error);
    if (refusedAtConnect) throw refusedAtConnect;
    if (timeout.aborted) throw new OutboundTimeoutError(policy.timeoutMs);
    throw error;
  }
}
