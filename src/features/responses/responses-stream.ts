import type { EventSourceMessage } from 'eventsource-parser';
import type { ChatStreamEvent, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { ResponsesStreamRenderer, type ResponseStreamEvent } from '../../dialects/openai/responses-stream.ts';
import { ProducedText } from '../../lib/produced-text.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { estimateTokens, textOf } from '../../lib/token-estimate.ts';
import type { ChatStream } from '../../providers/provider.ts';
import type { UpstreamResponse } from '../../providers/http-client.ts';
import { decodedStream, serverSentEvents } from '../../providers/sse-reader.ts';
import { estimateUsage } from '../inference/chat-completions.ts';
import { deltaText } from '../inference/chat-completions-relay.ts';
import { relayStream, type RelayDialect } from '../inference/stream-relay.ts';
import { tokenUsageFromChat, tokenUsageFromResponses } from '../inference/usage.ts';
import type { PassthroughCall, ResponsesService, TranslatedCall } from './responses-service.ts';
import type { PushSource } from '../../lib/push-stream.ts';

const frames = (events: readonly ResponseStreamEvent[]): string | undefined =>
  events.length === 0 ? undefined : events.map((event) => sseFrame(JSON.stringify(event), event.type)).join('');

/**
 * A Claude stream (canonical chat chunks) as Responses events. Usage comes from the adapter's usage chunk; a stream that
 * broke off first is charged from the tokenizer's estimate of what was produced. The finished Response is kept for storing.
 */
class TranslatedRelay implements RelayDialect<ChatStreamEvent> {
  private readonly renderer: ResponsesStreamRenderer;
  private usage: ChatUsage | undefined;
  private readonly produced = new ProducedText();
  response: JsonObject | undefined;

  constructor(
    private readonly service: ResponsesService,
    private readonly prepared: TranslatedCall,
  ) {
    this.renderer = new ResponsesStreamRenderer(prepared.context);
  }

  frame(event: ChatStreamEvent): string | undefined {
    const events: ResponseStreamEvent[] = this.renderer.hasStarted ? [] : this.renderer.start();
    if (event.kind === 'error') {
      events.push(this.renderer.error(event.error));
      return frames(events);
    }
    const { chunk } = event;
    if (chunk.usage) this.usage = chunk.usage;
    for (const choice of chunk.choices ?? []) {
      this.produced.add(deltaText(choice.delta));
      if (typeof choice.delta?.reasoning_content === 'string') this.produced.add(choice.delta.reasoning_content);
    }
    events.push(...this.renderer.chunk(chunk));
    return frames(events);
  }

  ends(event: ChatStreamEvent): boolean {
    return event.kind === 'error';
  }

  finished(): string | undefined {
    const usage = this.usage ?? estimateUsage(this.prepared.chat, this.produced.text);
    const { events, response } = this.renderer.finish(usage, estimateTokens(this.renderer.thinking));
    this.response = response;
    return frames(events);
  }

  charge(): void {
    this.service.charge(this.prepared.call, tokenUsageFromChat(this.usage ?? estimateUsage(this.prepared.chat, this.produced.text)));
  }
}

/** Relays a translated stream; once it has ended (charged), a finished response is stored before the client sees the end. */
export function relayTranslatedStream(service: ResponsesService, prepared: TranslatedCall, stream: ChatStream, report: (error: unknown) => void): PushSource<string> {
  const relay = new TranslatedRelay(service, prepared);
  return relayStream(stream.source(), relay, () => (relay.response ? service.storeTranslated(prepared, relay.response).catch(report) : Promise.resolve()));
}

/**
 * The vendor's Responses stream, frame by frame as it came. Only `data` is parsed: the id (`response.created`), the usage
 * (`response.completed` / `.incomplete` / `.failed`) and the text of `*.delta` events (an estimate if the stream breaks off).
 * A redirected model rewrites `response.model` in every frame that has one, and adds `warnings` to the first frame.
 */
class PassthroughRelay implements RelayDialect<EventSourceMessage> {
  private usage: JsonObject | undefined;
  private readonly produced = new ProducedText();
  private first = true;
  id: string | undefined;

  constructor(
    private readonly service: ResponsesService,
    private readonly prepared: PassthroughCall,
  ) {}

  frame(message: EventSourceMessage): string {
    let data: JsonObject | undefined;
    try {
      data = JSON.parse(message.data) as JsonObject;
    } catch {
      data = undefined;
    }
    const response = data?.response as JsonObject | undefined;
    if (response && typeof response.id === 'string') this.id ??= response.id;
    if (response?.usage && typeof response.usage === 'object') this.usage = response.usage as JsonObject;
    if (typeof data?.delta === 'string') this.produced.add(data.delta);
    const { resolution } = this.prepared.call;
    const first = this.first;
    this.first = false;
    if (!data || !resolution.warning || (!response && !first)) return sseFrame(message.data, message.event);
    const out: JsonObject = { ...data };
    if (response) out.response = { ...response, model: resolution.requested.id };
    if (first) out.warnings = [resolution.warning];
    return sseFrame(JSON.stringify(out), message.event);
  }

  /** The vendor's `error` event is relayed like any frame; the vendor ends the stream after it. */
  ends(): boolean {
    return false;
  }

  finished(): undefined {
    return undefined;
  }

  charge(): void {
    const tokens = tokenUsageFromResponses(this.usage);
    if (!this.usage) {
      const { request } = this.prepared;
      tokens.inputTokens = estimateTokens(textOf(request.input) + (request.instructions ?? ''));
      tokens.outputTokens = estimateTokens(this.produced.text);
    }
    this.service.charge(this.prepared.call, tokens);
  }
}

/** Relays a pass-through stream; the response id it announced is recorded (its owner) before the client sees the end. */
export function relayPassthroughStream(service: ResponsesService, prepared: PassthroughCall, upstream: UpstreamResponse, report: (error: unknown) => void): PushSource<string> {
  const relay = new PassthroughRelay(service, prepared);
  return relayStream(decodedStream(upstream.body, serverSentEvents()), relay, () => (relay.id ? service.recordPassthrough(prepared, relay.id).catch(report) : Promise.resolve()));
}
