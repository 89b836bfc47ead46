/** HTTP details of the Anthropic API: paths, authentication and version headers (PROTOCOLS §1.1). */
export interface AnthropicEndpoint {
  /** As the vendor's SDK takes it: `https://api.anthropic.com` (no `/v1`). */
  baseUrl: string;
  apiKey: string | null;
}

/** The API version sent when the client names none. */
export const DEFAULT_ANTHROPIC_VERSION = '2023-06-01';

export const anthropicUrl = (endpoint: AnthropicEndpoint, path: '/v1/messages' | '/v1/messages/count_tokens'): string =>
  `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`;

export function anthropicHeaders(
  endpoint: AnthropicEndpoint,
  requestId: string,
  options: { version?: string | undefined; betas?: readonly string[] } = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': options.version ?? DEFAULT_ANTHROPIC_VERSION,
    'x-request-id': requestId,
  };
  if (endpoint.apiKey) headers['x-api-key'] = endpoint.apiKey;
  if (options.betas && options.betas.length > 0) headers['anthropic-beta'] = options.betas.join(',');
  return headers;
}
