import type { UpstreamRoute } from './channels/upstream-route.ts';
import type {
  ChatRequest,
  ChatResponse,
  ChatStreamEvent,
  EmbeddingsRequest,
  EmbeddingsResponse,
  ModerationRequest,
  ModerationResponse,
} from '../core/chat-types.ts';
import type { CallSignal } from '../lib/call-abort.ts';
import type { PushSource } from '../lib/push-stream.ts';

export interface CallOptions {
  /** Aborts the upstream call (client went away, shutdown). */
  signal?: CallSignal;
  requestId: string;
  /** The request's way through the provider's channels (which model; where it went, how many attempts). */
  route: UpstreamRoute;
  /**
   * The request as the client sent it, which says exactly what the request object says (`passThroughBody`): an adapter
   * that sends the request as it is sends these bytes instead of serialising it again.
   */
  body?: Buffer | undefined;
}

/**
 * An upstream stream: single use. Read it once, event by event by async iteration or pushed by `source()` (the events of
 * one read of the body together, for a relay); `close()` aborts the upstream call when the consumer stops early. Reading
 * fails with UpstreamError when the connection breaks. Providers build it with `openChatStream` (chat-stream.ts), whose
 * comment is the full contract.
 */
export interface ChatStream extends AsyncIterable<ChatStreamEvent> {
  source(): PushSource<readonly ChatStreamEvent[]>;
  close(): void;
}

/** What every vendor adapter offers, over the canonical (OpenAI-format) types. Failures are thrown as UpstreamError. */
export interface Provider {
  readonly id: string;
  readonly type: 'openai' | 'anthropic';
  chatCompletion(request: ChatRequest, options: CallOptions): Promise<ChatResponse>;
  /** The vendor's answer as it came, for a vendor that answers in OpenAI's format (the route then splices in the costs). */
  chatCompletionText?(request: ChatRequest, options: CallOptions): Promise<string>;
  /** Resolves once the vendor has answered 200 and the stream has begun. */
  chatCompletionStream(request: ChatRequest, options: CallOptions): Promise<ChatStream>;
  embeddings(request: EmbeddingsRequest, options: CallOptions): Promise<EmbeddingsResponse>;
  moderations(request: ModerationRequest, options: CallOptions): Promise<ModerationResponse>;
}
