import type { Readable } from 'node:stream';
import type { JsonObject } from '../../core/chat-types.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { readServerSentEvents } from '../../providers/sse-reader.ts';
import type { MessagesService, PreparedMessages } from './messages.ts';

/**
 * Relays a Messages stream frame by frame as it arrives. Frames pass as they came except `message_start` when the model was
 * redirected (its `model` replaced, `warnings` added — the only frame that carries either). Usage is read from
 * `message_start` and from each `message_delta`, whose counts are cumulative: the last one wins, nothing is added twice.
 * The charge is booked when the relay ends for any reason (finished, vendor `error` event, client gone, connection lost).
 */
export async function* relayMessagesStream(service: MessagesService, prepared: PreparedMessages, body: Readable): AsyncGenerator<string> {
  const { resolution } = prepared.call;
  let usage: JsonObject | undefined;
  let outputSeen = false;
  let produced = '';
  try {
    for await (const message of readServerSentEvents(body)) {
      const event = message.event ?? 'message';
      if (event === 'message_start') {
        const data = JSON.parse(message.data) as JsonObject & { message?: JsonObject };
        usage = { ...((data.message?.usage as JsonObject | undefined) ?? {}) };
        if (resolution.warning && data.message) {
          yield sseFrame(JSON.stringify({ ...data, message: { ...data.message, model: resolution.requested.id }, warnings: [resolution.warning] }), event);
          continue;
        }
      } else if (event === 'message_delta') {
        const data = JSON.parse(message.data) as JsonObject;
        const delta = data.usage as JsonObject | undefined;
        if (delta) {
          usage = { ...(usage ?? {}), ...delta };
          if (typeof delta.output_tokens === 'number') outputSeen = true;
        }
      } else if (event === 'content_block_delta') {
        const data = JSON.parse(message.data) as { delta?: JsonObject };
        const delta = data.delta;
        if (delta) produced += (delta.text ?? delta.partial_json ?? delta.thinking ?? '') as string;
      }
      yield sseFrame(message.data, event);
    }
  } finally {
    if (!body.destroyed) body.destroy();
    service.chargeStream(prepared, usage, outputSeen, produced);
  }
}
