import { GatewayError } from '../core/errors.ts';
import { scrubVendorText } from './scrub-vendor-text.ts';

/** A vendor answered with an error status, or could not be reached. */
export class UpstreamError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly contentType: string,
    message: string,
    readonly kind: 'http' | 'timeout' | 'network' = 'http',
    /** The vendor's `retry-after` (429, 503), or for a 429 the gateway makes: when a channel may be tried again. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }

  /**
   * Whether another channel should be tried (DESIGN §12): a connection error, a timeout before the first byte, 429 or
   * 5xx. Any other answer is the vendor's verdict on the request itself and goes to the client.
   */
  get failsOver(): boolean {
    return this.kind !== 'http' || this.status === 429 || this.status >= 500;
  }

  /** 408, 409, 429 and 5xx can succeed when tried again; network failures too. */
  get retryable(): boolean {
    return this.kind !== 'http' || this.status === 408 || this.status === 409 || this.status === 429 || this.status >= 500;
  }
}

/** The vendor's error message from an OpenAI-shaped or Anthropic-shaped error body, scrubbed of account identifiers. */
export function vendorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } };
    return typeof parsed.error?.message === 'string' ? scrubVendorText(parsed.error.message) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * How a vendor failure reaches the client. A vendor 4xx about the request itself is the client's to fix: with
 * `passthrough` (the vendor speaks the endpoint's own format) its body is returned, else its message is kept; either way
 * scrubbed of what identifies the business's vendor account (DESIGN §14).
 * The vendor refusing our credentials is our fault, not the client's: 502. 429 stays 429; 5xx and network faults are 502, timeouts 504.
 */
export function toGatewayError(error: UpstreamError, passthrough: boolean): GatewayError {
  if (error.kind === 'timeout') return new GatewayError('upstream_timeout', 'The upstream model provider timed out.', { cause: error });
  if (error.kind === 'network') return new GatewayError('upstream_error', 'The upstream model provider could not be reached.', { cause: error });
  const message = vendorMessage(error.body) ?? `The upstream model provider answered ${error.status}.`;
  if (error.status === 401 || error.status === 403) {
    return new GatewayError('upstream_error', 'The upstream model provider refused the gateway credentials.', { cause: error });
  }
  if (error.status === 429) return new GatewayError('rate_limited', message, { cause: error, ...(error.retryAfterMs !== undefined ? { retryAfterMs: error.retryAfterMs } : {}) });
  if (error.status >= 400 && error.status < 500) {
    return new GatewayError(error.status === 404 ? 'model_not_found' : 'invalid_request', message, {
      cause: error,
      // Scrubbing changes the bytes only where an identifier was found; otherwise the vendor's body goes out untouched.
      ...(passthrough ? { passthrough: { status: error.status, body: scrubVendorText(error.body), contentType: error.contentType } } : {}),
    });
  }
  return new GatewayError('upstream_error', `The upstream model provider failed: ${message}`, { cause: error });
}
