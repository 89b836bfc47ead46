import type {
  ChatChunk,
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  EmbeddingsRequest,
  EmbeddingsResponse,
  JsonObject,
  ModerationRequest,
  ModerationResponse,
} from '../../core/chat-types.ts';
import { scanChatChunk } from '../../dialects/openai/chat-chunk-scan.ts';
import { extended } from '../../lib/objects.ts';
import type { ChannelClient } from '../channels/channel-client.ts';
import { parseJsonBody } from '../http-client.ts';
import type { CallOptions, ChatStream, Provider } from '../provider.ts';
import { openChatStream } from '../chat-stream.ts';
import { ServerSentEventDecoder, type StreamDecoder } from '../sse-reader.ts';
import { UpstreamError } from '../upstream-error.ts';
import { openAiHeaders, openAiUrl, type OpenAiEndpoint } from './openai-api.ts';

/** A vendor that speaks OpenAI's formats natively: requests go out as they are, answers come back as they are. */
export class OpenAiProvider implements Provider {
  readonly type = 'openai' as const;

  constructor(
    readonly id: string,
    private readonly http: ChannelClient,
  ) {}

  async chatCompletion(request: ChatRequest, options: CallOptions): Promise<ChatResponse> {
    return parseJsonBody<ChatResponse>(await this.chatCompletionText(request, options));
  }

  chatCompletionText(request: ChatRequest, options: CallOptions): Promise<string> {
    return this.postText('/chat/completions', request, options);
  }

  chatCompletionStream(request: ChatRequest, options: CallOptions): Promise<ChatStream> {
    const body = options.body ?? JSON.stringify(request);
    const target = (endpoint: OpenAiEndpoint) => ({ url: openAiUrl(endpoint, '/chat/completions'), headers: extended(openAiHeaders(endpoint, options.requestId), { accept: 'text/event-stream' }) });
    return openChatStream(options.signal, (signal) => this.http.send(target, { body, signal }, options.route), openAiStreamDecoder());
  }

  embeddings(request: EmbeddingsRequest, options: CallOptions): Promise<EmbeddingsResponse> {
    return this.postJson<EmbeddingsResponse>('/embeddings', request, options);
  }

  moderations(request: ModerationRequest, options: CallOptions): Promise<ModerationResponse> {
    return this.postJson<ModerationResponse>('/moderations', request, options);
  }

  private async postJson<T>(path: string, body: JsonObject, options: CallOptions): Promise<T> {
    return parseJsonBody<T>(await this.postText(path, body, options));
  }

  /** Not an async function: its parameters would be held until the answer came, a long conversation's parsed body among them. */
  private postText(path: string, body: JsonObject, options: CallOptions): Promise<string> {
    return this.http
      .sendForText((endpoint) => ({ url: openAiUrl(endpoint, path), headers: openAiHeaders(endpoint, options.requestId) }), { body: options.body ?? JSON.stringify(body), signal: options.signal }, options.route)
      .then(textOf);
  }
}

const textOf = (answer: { text: string }): string => answer.text;

/**
 * OpenAI's chat stream as canonical events; `[DONE]` completes it. A frame is scanned, not parsed (ScannedChatChunk, a
 * top-level usage object parsed alone), unless it carries what must be read as JSON: an error, tool calls.
 */
function openAiStreamDecoder(): StreamDecoder<ChatStreamEvent> {
  return new ServerSentEventDecoder<ChatStreamEvent>(({ data }, out) => {
    if (data === '[DONE]') return true;
    const scanned = scanChatChunk(data);
    if (scanned) {
      out.push(scanned);
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw new UpstreamError(502, data, 'text/plain', 'upstream sent a frame that is not JSON');
    }
    const object = parsed as JsonObject;
    if (object.error && typeof object.error === 'object') out.push({ kind: 'error', error: object.error as JsonObject, raw: data });
    else out.push({ kind: 'chunk', chunk: object as ChatChunk, raw: data });
  });
}
