import type { ChannelClient } from '../channels/channel-client.ts';
import type { UpstreamRoute } from '../channels/upstream-route.ts';
import type { UpstreamResponse } from '../http-client.ts';
import { anthropicHeaders, anthropicUrl } from './anthropic-api.ts';

export interface PassthroughOptions {
  requestId: string;
  version: string | undefined;
  betas: readonly string[];
  signal?: AbortSignal;
  route: UpstreamRoute;
}

/**
 * Sends a Messages-format body to the vendor as the client's own bytes (after the gateway's rewrites) and hands back the
 * raw response, for the pass-through endpoint (SPEC 4.2). Non-2xx answers are thrown as UpstreamError by the client.
 */
export class AnthropicPassthrough {
  constructor(
    readonly id: string,
    private readonly http: ChannelClient,
  ) {}

  send(path: '/v1/messages' | '/v1/messages/count_tokens', body: string, options: PassthroughOptions, stream = false): Promise<UpstreamResponse> {
    const target = (endpoint: { baseUrl: string; apiKey: string | null }) => {
      const headers = anthropicHeaders(endpoint, options.requestId, { version: options.version, betas: options.betas });
      if (stream) headers.accept = 'text/event-stream';
      return { url: anthropicUrl(endpoint, path), headers };
    };
    return this.http.send(target, { body, signal: options.signal }, options.route);
  }
}
