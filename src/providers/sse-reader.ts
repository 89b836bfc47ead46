import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { transportError } from './http-client.ts';

/**
 * Parses a server-sent-events body into messages (eventsource-parser does the framing).
 * Throws UpstreamError when the body breaks off.
 */
export async function* readServerSentEvents(body: Readable): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (message) => pending.push(message) });
  const decoder = new TextDecoder();
  try {
    for await (const piece of body) {
      parser.feed(typeof piece === 'string' ? piece : decoder.decode(piece as Uint8Array, { stream: true }));
      while (pending.length > 0) yield pending.shift()!;
    }
  } catch (error) {
    throw transportError(error);
  }
  parser.feed(decoder.decode());
  while (pending.length > 0) yield pending.shift()!;
}
