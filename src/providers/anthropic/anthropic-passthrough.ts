import type { ChannelClient, UpstreamTarget } from '../channels/channel-client.ts';
import type { UpstreamRoute } from '../channels/upstream-route.ts';
import type { UpstreamResponse, UpstreamText } from '../http-client.ts';
import { anthropicHeaders, anthropicUrl } from './anthropic-api.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

export interface PassthroughOptions {
  requestId: string;
  version: string | undefined;
  betas: readonly string[];
  signal?: CallSignal;
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

  /** A stream: the response is handed back before its body is read. */
  send(path: MessagesPath, body: string | Buffer, options: PassthroughOptions, stream = false): Promise<UpstreamResponse> {
    return this.http.send(target(path, options, stream), { body, signal: options.signal }, options.route);
  }

  /** A call whose answer is read whole (non-stream create, count_tokens). */
  sendForText(path: MessagesPath, body: string | Buffer, options: PassthroughOptions): Promise<UpstreamText> {
    return this.http.sendForText(target(path, options, false), { body, signal: options.signal }, options.route);
  }
}

type MessagesPath = '/v1/messages' | '/v1/messages/count_tokens';

function target(path: MessagesPath, options: PassthroughOptions, stream: boolean): UpstreamTarget {
  return (endpoint) => {
    const headers = anthropicHeaders(endpoint, options.requestId, { version: options.version, betas: options.betas });
    if (stream) headers.accept = 'text/event-stream';
    return { url: anthropicUrl(endpoint, path), headers };
  };
}
