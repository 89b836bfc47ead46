import type {
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  EmbeddingsResponse,
  ModerationResponse,
} from '../../core/chat-types.ts';
import { GatewayError } from '../../core/errors.ts';
import { systemClock, unixSeconds, type Clock } from '../../lib/clock.ts';
import type { ChannelClient } from '../channels/channel-client.ts';
import type { UpstreamResponse } from '../http-client.ts';
import type { CallOptions, ChatStream, Provider } from '../provider.ts';
import { openChatStream } from '../chat-stream.ts';
import { ServerSentEventDecoder } from '../sse-reader.ts';
import { UpstreamError } from '../upstream-error.ts';
import { anthropicMessageSchema } from './anthropic-api-schemas.ts';
import { anthropicHeaders, anthropicUrl } from './anthropic-api.ts';
import { toCanonicalUpstreamError } from './anthropic-error.ts';
import { AnthropicStreamToChunks, parseAnthropicStreamEvent } from './anthropic-stream-to-chunks.ts';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.ts';
import { convertToAnthropicMessages, type AnthropicMessagesRequest } from './convert-to-anthropic-messages.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

/**
 * Claude behind the OpenAI chat format: each chat request is converted to a Messages request, and the answer (or its
 * stream) back to OpenAI's shapes. Vendor error bodies are converted too (see anthropic-error.ts). Anthropic has no
 * embeddings or moderation API.
 */
export class AnthropicChatProvider implements Provider {
  readonly type = 'anthropic' as const;

  constructor(
    readonly id: string,
    private readonly http: ChannelClient,
    private readonly clock: Clock = systemClock,
  ) {}

  async chatCompletion(request: ChatRequest, options: CallOptions): Promise<ChatResponse> {
    const body = convertToAnthropicMessages({ ...request, stream: false });
    const response = await this.send(body, options, options.signal);
    const json = await this.http.json<unknown>(response);
    const message = anthropicMessageSchema.safeParse(json);
    if (!message.success) throw new UpstreamError(502, JSON.stringify(json), 'application/json', 'upstream sent a message the gateway cannot read');
    return convertFromAnthropicResponse(message.data, unixSeconds(this.clock), body.thinking !== undefined);
  }

  chatCompletionStream(request: ChatRequest, options: CallOptions): Promise<ChatStream> {
    const body = convertToAnthropicMessages({ ...request, stream: true });
    const converter = new AnthropicStreamToChunks({
      includeUsage: request.stream_options?.include_usage === true,
      createdSeconds: unixSeconds(this.clock),
      reasoning: body.thinking !== undefined,
    });
    const decoder = new ServerSentEventDecoder<ChatStreamEvent>((message, out) => {
      const event = parseAnthropicStreamEvent(message.data);
      if (!event) return;
      for (const converted of converter.convert(event)) out.push(converted);
      // Both end the message; nothing the vendor might still send belongs to it.
      return event.type === 'message_stop' || event.type === 'error';
    });
    return openChatStream(options.signal, (signal) => this.send(body, options, signal, { accept: 'text/event-stream' }), decoder);
  }

  embeddings(): Promise<EmbeddingsResponse> {
    return Promise.reject(new GatewayError('invalid_request', 'The Anthropic provider does not serve embeddings; choose an embeddings model.', { param: 'model' }));
  }

  moderations(): Promise<ModerationResponse> {
    return Promise.reject(new GatewayError('invalid_request', 'The Anthropic provider does not serve moderations; choose a moderation model.', { param: 'model' }));
  }

  private async send(body: AnthropicMessagesRequest, options: CallOptions, signal: CallSignal | undefined, extraHeaders: Record<string, string> = {}): Promise<UpstreamResponse> {
    try {
      return await this.http.send(
        (endpoint) => ({ url: anthropicUrl(endpoint, '/v1/messages'), headers: { ...anthropicHeaders(endpoint, options.requestId), ...extraHeaders } }),
        { body: JSON.stringify(body), signal },
        options.route,
      );
    } catch (error) {
      throw toCanonicalUpstreamError(error);
    }
  }
}
