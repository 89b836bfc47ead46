import type { HttpClient, UpstreamResponse } from '../http-client.ts';
import { anthropicHeaders, anthropicUrl, type AnthropicEndpoint } from './anthropic-api.ts';

export interface PassthroughOptions {
  requestId: string;
  version: string | undefined;
  betas: readonly string[];
  signal?: AbortSignal;
}

/**
 * Sends a Messages-format body to the vendor as the client's own bytes (after the gateway's rewrites) and hands back the
 * raw response, for the pass-through endpoint (SPEC 4.2). Non-2xx answers are thrown as UpstreamError by the client.
 */
export class AnthropicPassthrough {
  constructor(
    readonly id: string,
    private readonly endpoint: AnthropicEndpoint,
    private readonly http: HttpClient,
  ) {}

  send(path: '/v1/messages' | '/v1/messages/count_tokens', body: string, options: PassthroughOptions, stream = false): Promise<UpstreamResponse> {
    const headers = anthropicHeaders(this.endpoint, options.requestId, { version: options.version, betas: options.betas });
    if (stream) headers.accept = 'text/event-stream';
    return this.http.send(anthropicUrl(this.endpoint, path), { headers, body, ...(options.signal ? { signal: options.signal } : {}) });
  }
}
