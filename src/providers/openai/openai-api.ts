/** HTTP details of an OpenAI-format vendor: where each operation lives and which headers it takes. */
export interface OpenAiEndpoint {
  baseUrl: string;
  apiKey: string | null;
}

export const openAiUrl = (endpoint: OpenAiEndpoint, path: string): string => `${endpoint.baseUrl.replace(/\/+$/, '')}${path}`;

export function openAiHeaders(endpoint: OpenAiEndpoint, requestId: string, contentType = 'application/json'): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': contentType, 'x-request-id': requestId };
  if (endpoint.apiKey) headers.authorization = `Bearer ${endpoint.apiKey}`;
  return headers;
}
