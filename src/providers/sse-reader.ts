import type { Readable } from 'node:stream';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { transportError } from './http-client.ts';

/**
 * Parses a server-sent-events body into messages (eventsource-parser does the framing), each turned into what the caller
 * wants by `map` as it is framed (undefined drops it): one generator between the body and the caller, not one per step.
 * Throws UpstreamError when the body breaks off — unless `finished` says the caller already has all it needs (a vendor's
 * end-of-stream marker came), then the rest is only drained.
 */
export function readServerSentEvents(body: Readable): AsyncGenerator<EventSourceMessage>;
export function readServerSentEvents<T>(body: Readable, map: (message: EventSourceMessage) => T | undefined, finished?: () => boolean): AsyncGenerator<T>;
export async function* readServerSentEvents<T>(
  body: Readable,
  map: (message: EventSourceMessage) => T | undefined = (message) => message as T,
  finished: () => boolean = () => false,
): AsyncGenerator<T> {
  const pending: T[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const item = map(message);
      if (item !== undefined) pending.push(item);
    },
  });
  const decoder = new TextDecoder();
  try {
    for await (const piece of body) {
      parser.feed(typeof piece === 'string' ? piece : decoder.decode(piece as Uint8Array, { stream: true }));
      for (let index = 0; index < pending.length; index++) yield pending[index]!;
      pending.length = 0;
    }
  } catch (error) {
    if (finished()) return;
    throw transportError(error);
  }
  parser.feed(decoder.decode());
  for (const item of pending) yield item;
}
