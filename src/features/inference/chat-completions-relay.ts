import type { ChatChunk, ChatRequest, ChatStreamEvent, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { priceUsage } from '../billing/pricing.ts';
import type { ModelCall } from './model-call.ts';
import type { RelayDialect } from './stream-relay.ts';
import { tokenUsageFromChat } from './usage.ts';
import { withCosts } from './priced-usage.ts';

/**
 * OpenAI chat-stream frames as the client gets them. Frames pass unchanged unless a rule applies: retirement (`model`
 * replaced in every frame, `warnings` in the first), and the usage frame (costs added; dropped when the client did not
 * ask for usage). A vendor error event is sent as an error frame and ends the stream; a finished stream ends with `[DONE]`.
 * The charge follows the vendor's usage, or is estimated from what was produced when the stream broke off first.
 */
export class ChatCompletionsRelay implements RelayDialect<ChatStreamEvent> {
  private readonly clientWantsUsage: boolean;
  private readonly redirected: boolean;
  private usage: ChatUsage | undefined;
  private produced = '';
  private first = true;

  constructor(
    private readonly call: ModelCall,
    request: ChatRequest,
    private readonly book: (usage: ChatUsage | undefined, produced: string) => void,
  ) {
    this.clientWantsUsage = request.stream_options?.include_usage === true;
    this.redirected = call.resolution.warning !== null;
  }

  frame(event: ChatStreamEvent): string | undefined {
    if (event.kind === 'error') return sseFrame(JSON.stringify({ error: event.error }));
    const payload = this.payload(event.chunk, event.raw);
    if (payload === undefined) return undefined;
    this.first = false;
    return sseFrame(payload);
  }

  ends(event: ChatStreamEvent): boolean {
    return event.kind === 'error';
  }

  finished(): string {
    return sseFrame('[DONE]');
  }

  charge(): void {
    this.book(this.usage, this.produced);
  }

  private payload(chunk: ChatChunk, raw: string): string | undefined {
    const { resolution } = this.call;
    for (const choice of chunk.choices ?? []) this.produced += deltaText(choice.delta);
    if (chunk.usage) this.usage = chunk.usage;
    const isUsageFrame = chunk.usage != null && (chunk.choices?.length ?? 0) === 0;
    if (isUsageFrame && !this.clientWantsUsage) return undefined;
    const rewrite = this.redirected || isUsageFrame || (!this.clientWantsUsage && 'usage' in chunk);
    if (!rewrite) return raw;
    // The `usage: null` the vendor puts on every frame (because the gateway asked for usage) is cut from the text
    // instead of re-serialising the frame.
    if (!this.redirected && !isUsageFrame && chunk.usage === null) {
      const cut = raw.replace(',"usage":null', '');
      if (cut.length !== raw.length) return cut;
    }
    const out: ChatChunk & { warnings?: unknown[] } = { ...chunk };
    if (!this.clientWantsUsage) delete out.usage;
    if (this.redirected) out.model = resolution.requested.id;
    if (this.redirected && this.first) out.warnings = [resolution.warning];
    if (isUsageFrame && this.usage) out.usage = withCosts(this.usage, priceUsage(resolution.billed, tokenUsageFromChat(this.usage)));
    return JSON.stringify(out);
  }
}

/** Text of one stream delta (content and tool-call names and arguments), for estimating output tokens. */
export function deltaText(delta: JsonObject | undefined): string {
  if (!delta) return '';
  let text = typeof delta.content === 'string' ? delta.content : '';
  if (Array.isArray(delta.tool_calls)) {
    for (const call of delta.tool_calls as JsonObject[]) {
      const fn = call.function as JsonObject | undefined;
      if (typeof fn?.name === 'string') text += fn.name;
      if (typeof fn?.arguments === 'string') text += fn.arguments;
    }
  }
  return text;
}
