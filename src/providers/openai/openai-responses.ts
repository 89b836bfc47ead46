import type { HttpClient, UpstreamResponse } from '../http-client.ts';
import { openAiHeaders, openAiUrl, type OpenAiEndpoint } from './openai-api.ts';

/**
 * The Responses API of an OpenAI-format vendor, passed through: the client's body (after the gateway's rewrites) goes out
 * as bytes and the raw response comes back, for the relay to read usage from. Non-2xx answers are thrown as UpstreamError.
 */
export class OpenAiResponses {
  constructor(
    readonly id: string,
    private readonly endpoint: OpenAiEndpoint,
    private readonly http: HttpClient,
  ) {}

  create(body: string, options: { requestId: string; stream: boolean; signal?: AbortSignal | undefined }): Promise<UpstreamResponse> {
    const headers = openAiHeaders(this.endpoint, options.requestId);
    if (options.stream) headers.accept = 'text/event-stream';
    return this.http.send(openAiUrl(this.endpoint, '/responses'), { headers, body, ...(options.signal ? { signal: options.signal } : {}) });
  }

  /** `GET /responses/:id` with the client's query string (`include[]`, …). */
  retrieve(id: string, query: string, options: { requestId: string }): Promise<UpstreamResponse> {
    const { 'content-type': _json, ...headers } = openAiHeaders(this.endpoint, options.requestId);
    const url = `${openAiUrl(this.endpoint, `/responses/${encodeURIComponent(id)}`)}${query ? `?${query}` : ''}`;
    return this.http.send(url, { method: 'GET', headers });
  }
}
