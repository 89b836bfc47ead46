import type { EventSourceMessage } from 'eventsource-parser';
import type { JsonObject } from '../../core/chat-types.ts';
import { decodeJsonText, escapedStringValues, escapeJsonText } from '../../lib/json-scan.ts';
import { extended } from '../../lib/objects.ts';
import { ProducedText } from '../../lib/produced-text.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import type { UpstreamBody } from '../../providers/http-client.ts';
import { decodedStream, serverSentEvents } from '../../providers/sse-reader.ts';
import type { MessagesService, PreparedMessages } from './messages.ts';
import { relayStream, type RelayDialect } from './stream-relay.ts';
import type { PushSource } from '../../lib/push-stream.ts';

/** The keys whose string values are a delta's text (text, tool input, thinking), up to the value's opening quote. */
const DELTA_TEXT = /"(text|partial_json|thinking)"[ \t\r\n]*:[ \t\r\n]*"/g;

/**
 * Messages stream frames as the client gets them: as they came, except `message_start` when the model was redirected
 * (its `model` replaced, `warnings` added — the only frame that carries either). Usage is read from `message_start` and
 * from each `message_delta`, whose counts are cumulative: the last one wins, nothing is added twice. Only those frames
 * are parsed; `content_block_delta` is scanned for the text produced (an estimate when the stream breaks off).
 */
class MessagesRelay implements RelayDialect<EventSourceMessage> {
  private usage: JsonObject | undefined;
  private outputSeen = false;
  /** The deltas' text, JSON-escaped. */
  private readonly produced = new ProducedText();

  constructor(
    private readonly service: MessagesService,
    private readonly prepared: PreparedMessages,
  ) {}

  frame(message: EventSourceMessage): string {
    const { resolution } = this.prepared.call;
    const event = message.event ?? 'message';
    if (event === 'message_start') {
      const data = JSON.parse(message.data) as JsonObject & { message?: JsonObject };
      this.usage = { ...((data.message?.usage as JsonObject | undefined) ?? {}) };
      if (resolution.warning && data.message) {
        return sseFrame(JSON.stringify({ ...data, message: { ...data.message, model: resolution.requested.id }, warnings: [resolution.warning] }), event);
      }
    } else if (event === 'message_delta') {
      const delta = (JSON.parse(message.data) as JsonObject).usage as JsonObject | undefined;
      if (delta) {
        this.usage = extended(this.usage ?? {}, delta);
        if (typeof delta.output_tokens === 'number') this.outputSeen = true;
      }
    } else if (event === 'content_block_delta') {
      // Scanned, not parsed (one per token or so): the text of the delta, kept JSON-escaped until an estimate needs it.
      const text = escapedStringValues(message.data, DELTA_TEXT);
      if (text !== undefined) this.produced.add(text);
      else {
        const delta = (JSON.parse(message.data) as { delta?: JsonObject }).delta;
        if (delta) this.produced.add(escapeJsonText((delta.text ?? delta.partial_json ?? delta.thinking ?? '') as string));
      }
    }
    return sseFrame(message.data, event);
  }

  /** The vendor's `error` event is relayed like any frame; the vendor ends the stream after it. */
  ends(): boolean {
    return false;
  }

  finished(): undefined {
    return undefined;
  }

  charge(): void {
    this.service.chargeStream(this.prepared, this.usage, this.outputSeen, this.outputSeen ? '' : decodeJsonText(this.produced.text));
  }
}

/**
 * Relays a Messages stream as it arrives, the frames of each read of the body together; the charge is booked once when the
 * relay ends for any reason.
 */
export function relayMessagesStream(service: MessagesService, prepared: PreparedMessages, body: UpstreamBody): PushSource<string> {
  return relayStream(decodedStream(body, serverSentEvents()), new MessagesRelay(service, prepared));
}
