import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { transportError } from './http-client.ts';

const BYTE_ORDER_MARK = 0xfeff;

/** What an SSE body is read from: an upstream body (UpstreamBody) or any stream of bytes or text. */
export type SseSource = AsyncIterable<Buffer | Uint8Array | string>;

/**
 * Parses a server-sent-events body into messages (eventsource-parser does the framing), each turned into what the caller
 * wants by `map` as it is framed (undefined drops it), and hands them out a read at a time: each batch holds what one
 * piece of the body completed (never empty), so a relay handles a batch in one step (issue 16: a vendor's read holding 20
 * frames took 20 trips through three async generators). Throws UpstreamError when the body breaks off — unless `finished`
 * says the caller already has all it needs (a vendor's end-of-stream marker came), then the rest is only drained.
 */
export function readServerSentEventBatches(body: SseSource): AsyncGenerator<EventSourceMessage[]>;
export function readServerSentEventBatches<T>(body: SseSource, map: (message: EventSourceMessage) => T | undefined, finished?: () => boolean): AsyncGenerator<T[]>;
export async function* readServerSentEventBatches<T>(
  body: SseSource,
  map: (message: EventSourceMessage) => T | undefined = (message) => message as T,
  finished: () => boolean = () => false,
): AsyncGenerator<T[]> {
  let pending: T[] = [];
  const parser = createParser({
    onEvent: (message) => {
      const item = map(message);
      if (item !== undefined) pending.push(item);
    },
  });
  // StringDecoder rather than TextDecoder: 0.1 µs a chunk against 0.5 (a multi-byte character split between chunks is
  // kept for the next one either way). TextDecoder dropped a leading byte-order mark, which the SSE standard says to
  // ignore and eventsource-parser does not: `first` does it.
  const decoder = new StringDecoder('utf8');
  let first = true;
  try {
    for await (const piece of body) {
      let text = typeof piece === 'string' ? piece : decoder.write(piece as Buffer);
      if (first && text !== '') {
        first = false;
        if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
      }
      parser.feed(text);
      if (pending.length > 0) {
        const batch = pending;
        pending = [];
        yield batch;
      }
    }
  } catch (error) {
    if (finished()) return;
    throw transportError(error);
  }
  parser.feed(decoder.end());
  if (pending.length > 0) yield pending;
}
