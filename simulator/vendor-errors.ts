// The vendors' own error bodies, per HTTP status (PROTOCOLS 1.8 and 2.3).

export interface OpenAiErrorObject {
  message: string;
  type: string;
  param: string | null;
  code: string | null;
}

export function openAiError(message: string, type: string, param: string | null = null, code: string | null = null): { error: OpenAiErrorObject } {
  return { error: { message, type, param, code } };
}

/** OpenAI error body for an injected status. */
export function openAiStatusError(status: number, model: string | undefined): { error: OpenAiErrorObject } {
  const name = model ?? 'the model';
  switch (status) {
    case 400: return openAiError('Invalid request.', 'invalid_request_error');
    case 401: return openAiError('Incorrect API key provided: sk-sim***. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', null, 'invalid_api_key');
    case 403: return openAiError('Country, region, or territory not supported', 'request_forbidden', null, 'unsupported_country_region_territory');
    case 404: return openAiModelNotFound(name);
    case 408: return openAiError('Request timed out.', 'invalid_request_error', null, 'timeout');
    case 409: return openAiError('Conflict.', 'invalid_request_error');
    case 413: return openAiError('Request entity too large.', 'invalid_request_error');
    case 422: return openAiError('Unprocessable entity.', 'invalid_request_error');
    case 429: return openAiError(`Rate limit reached for ${name} in organization org-simulator on requests per min (RPM): Limit 60, Used 60, Requested 1. Please try again in 1s.`, 'requests', null, 'rate_limit_exceeded');
    case 500: return openAiError('The server had an error while processing your request. Sorry about that!', 'server_error');
    case 502: return openAiError('Bad gateway.', 'server_error', null, 'bad_gateway');
    case 503: return openAiError('The engine is currently overloaded, please try again later.', 'server_error', null, 'service_unavailable');
    case 504: return openAiError('Gateway timeout.', 'server_error', null, 'gateway_timeout');
    default: return status >= 500
      ? openAiError('The server had an error while processing your request. Sorry about that!', 'server_error')
      : openAiError(`Request failed with status ${status}.`, 'invalid_request_error');
  }
}

export function openAiModelNotFound(model: string): { error: OpenAiErrorObject } {
  return openAiError(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', null, 'model_not_found');
}

export const OPENAI_MISSING_KEY = openAiError(
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (i.e. YOUR_KEY:), or as the username field (i.e. :YOUR_KEY). You can obtain an API key from https://platform.openai.com/account/api-keys.",
  'invalid_request_error',
);

/** Mid-stream error frame body OpenAI sends after a 200. */
export const OPENAI_STREAM_ERROR = openAiError('The server had an error while processing your request. Sorry about that!', 'server_error');

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

export function anthropicError(type: string, message: string, requestId: string): AnthropicErrorBody {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

const ANTHROPIC_STATUS_ERRORS: Record<number, [type: string, message: string]> = {
  400: ['invalid_request_error', 'Invalid request'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'Not found'],
  409: ['conflict_error', 'Conflict'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute. For details, refer to: https://docs.claude.com/en/api/rate-limits.'],
  500: ['api_error', 'Internal server error'],
  504: ['timeout_error', 'Request timeout'],
  529: ['overloaded_error', 'Overloaded'],
};

/** Anthropic error body for an injected status. */
export function anthropicStatusError(status: number, requestId: string): AnthropicErrorBody {
  const known = ANTHROPIC_STATUS_ERRORS[status];
  if (known !== undefined) return anthropicError(known[0], known[1], requestId);
  return status >= 500
    ? anthropicError('api_error', 'Internal server error', requestId)
    : anthropicError('invalid_request_error', `Request failed with status ${status}`, requestId);
}

/** The body of the in-stream `event: error` frame (it carries no request_id). */
export const ANTHROPIC_OVERLOADED_EVENT = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
