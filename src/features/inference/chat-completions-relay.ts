import type { ChatChunk, ChatRequest, ChatStreamEvent, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { ScannedChatChunk, type ScannedUsage } from '../../dialects/openai/chat-chunk-scan.ts';
import { decodeJsonText, escapeJsonText } from '../../lib/json-scan.ts';
import { ProducedText } from '../../lib/produced-text.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { priceUsage } from '../billing/pricing.ts';
import type { ModelCall } from './model-call.ts';
import type { RelayDialect } from './stream-relay.ts';
import { tokenUsageFromChat } from './usage.ts';
import { pricedUsageText, withCosts } from './priced-usage.ts';

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
  /** The deltas' text so far, JSON-escaped (scanned frames keep it so; decoded only for an estimate). */
  private readonly produced = new ProducedText();
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
    const payload = event instanceof ScannedChatChunk ? this.scanned(event) : this.parsed(event.chunk, event.raw);
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
    this.book(this.usage, this.usage ? '' : decodeJsonText(this.produced.text));
  }

  /** A frame the vendor's reader scanned (no tool calls, no error): passed on, or only its `"usage":null` cut. */
  private scanned(frame: ScannedChatChunk): string | undefined {
    if (frame.usageObject) return this.scannedUsage(frame, frame.usageObject);
    this.produced.add(frame.escapedText);
    if (this.redirected) return this.rewritten(frame.chunk, false);
    if (!frame.usageNull || this.clientWantsUsage) return frame.raw;
    return this.withoutUsageNull(frame.raw) ?? this.rewritten(frame.chunk, false);
  }

  /**
   * The usage frame, its usage parsed alone: dropped when the client did not ask for usage, else the vendor's text with the
   * costs written into its usage. A usage on a frame that also has choices, or a redirected call, takes the parsed path.
   */
  private scannedUsage(frame: ScannedChatChunk, found: ScannedUsage): string | undefined {
    if (!found.choicesEmpty || this.redirected) return this.parsed(frame.chunk, frame.raw);
    this.usage = found.usage;
    if (!this.clientWantsUsage) return undefined;
    const { raw } = frame;
    const cost = priceUsage(this.call.resolution.billed, tokenUsageFromChat(found.usage));
    return `${raw.slice(0, found.start)}${pricedUsageText(raw.slice(found.start, found.end), found.usage, cost)}${raw.slice(found.end)}`;
  }

  private parsed(chunk: ChatChunk, raw: string): string | undefined {
    for (const choice of chunk.choices ?? []) this.produced.add(escapeJsonText(deltaText(choice.delta)));
    if (chunk.usage) this.usage = chunk.usage;
    const isUsageFrame = chunk.usage != null && (chunk.choices?.length ?? 0) === 0;
    if (isUsageFrame && !this.clientWantsUsage) return undefined;
    const rewrite = this.redirected || isUsageFrame || (!this.clientWantsUsage && 'usage' in chunk);
    if (!rewrite) return raw;
    if (!this.redirected && !isUsageFrame && chunk.usage === null) {
      const cut = this.withoutUsageNull(raw);
      if (cut !== undefined) return cut;
    }
    return this.rewritten(chunk, isUsageFrame);
  }

  /**
   * The `usage: null` the vendor puts on every frame (because the gateway asked for usage) cut from the text instead of
   * re-serialising the frame; undefined when it is not written that way.
   */
  private withoutUsageNull(raw: string): string | undefined {
    const cut = raw.replace(',"usage":null', '');
    return cut.length !== raw.length ? cut : undefined;
  }

  private rewritten(chunk: ChatChunk, isUsageFrame: boolean): string {
    const { resolution } = this.call;
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
