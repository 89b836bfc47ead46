import type { JsonObject } from '../../core/chat-types.ts';
import { UpstreamError } from '../upstream-error.ts';
import { anthropicErrorBodySchema } from './anthropic-api-schemas.ts';

/**
 * An Anthropic error (`{type, message}`, PROTOCOLS §1.8) as OpenAI's error object (§2.3). The vendor's type is kept:
 * `invalid_request_error` and `rate_limit_error` mean the same in both, and the others say what happened.
 */
export function openAiErrorObject(error: { type: string; message: string }): JsonObject {
  return { message: error.message, type: error.type, param: null, code: null };
}

/**
 * The vendor's error response in the canonical (OpenAI) format. The chat-completions route passes a vendor 4xx body on
 * to its client unchanged, and that client speaks OpenAI's format, not Anthropic's. Status and kind stay, so retries and
 * the status mapping behave as for any vendor; a body that is not an Anthropic error is left as it came.
 */
export function toCanonicalUpstreamError(error: unknown): unknown {
  if (!(error instanceof UpstreamError) || error.kind !== 'http') return error;
  let parsed: unknown;
  try {
    parsed = JSON.parse(error.body);
  } catch {
    return error;
  }
  const result = anthropicErrorBodySchema.safeParse(parsed);
  if (!result.success) return error;
  const body = JSON.stringify({ error: openAiErrorObject(result.data.error) });
  return new UpstreamError(error.status, body, 'application/json', error.message, error.kind, error.retryAfterMs);
}
