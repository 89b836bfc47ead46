import type { ChannelClient } from '../channels/channel-client.ts';
import type { UpstreamRoute } from '../channels/upstream-route.ts';
import type { UpstreamResponse } from '../http-client.ts';
import { openAiHeaders, openAiUrl } from './openai-api.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

/**
 * The Responses API of an OpenAI-format vendor, passed through: the client's body (after the gateway's rewrites) goes out
 * as bytes and the raw response comes back, for the relay to read usage from. Non-2xx answers are thrown as UpstreamError.
 */
export class OpenAiResponses {
  constructor(
    readonly id: string,
    private readonly http: ChannelClient,
  ) {}

  /** `channel` pins a follow-up (`previous_response_id`) to the channel that made the stored response. */
  create(body: string | Buffer, options: { requestId: string; stream: boolean; signal?: CallSignal | undefined; route: UpstreamRoute; channel?: string | null }): Promise<UpstreamResponse> {
    const target = (endpoint: { baseUrl: string; apiKey: string | null }) => {
      const headers = openAiHeaders(endpoint, options.requestId);
      if (options.stream) headers.accept = 'text/event-stream';
      return { url: openAiUrl(endpoint, '/responses'), headers };
    };
    return this.http.send(target, { body, signal: options.signal }, options.route, options.channel);
  }

  /** `GET /responses/:id` with the client's query string (`include[]`, …), from the channel that made it when known. */
  retrieve(id: string, query: string, options: { requestId: string; route: UpstreamRoute; channel?: string | null }): Promise<UpstreamResponse> {
    const target = (endpoint: { baseUrl: string; apiKey: string | null }) => {
      const { 'content-type': _json, ...headers } = openAiHeaders(endpoint, options.requestId);
      return { url: `${openAiUrl(endpoint, `/responses/${encodeURIComponent(id)}`)}${query ? `?${query}` : ''}`, headers };
    };
    return this.http.send(target, { method: 'GET' }, options.route, options.channel);
  }
}
