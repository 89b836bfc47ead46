import type { ChatStreamEvent } from '../core/chat-types.ts';
import type { UpstreamResponse } from './http-client.ts';
import type { ChatStream } from './provider.ts';
import { decodedStream, type StreamDecoder } from './sse-reader.ts';
import type { CallSignal } from '../lib/call-abort.ts';
import { pulled, type PushSource } from '../lib/push-stream.ts';

/**
 * Opens an upstream stream and wraps it in the one ChatStream every provider returns (openai-node's Stream contract):
 *
 * - single use: it is read once, pushed (`source()`: the batches of events each read of the body completed, the relays'
 *   way) or by async iteration over its events; a second read throws (the body cannot be read twice);
 * - `close()` is idempotent: it aborts the upstream request and destroys the response body at once, so the vendor stops
 *   generating (and billing) tokens nobody will read;
 * - leaving the loop early (`break`, `return`, an exception in the loop body) closes it, as does the end of the body;
 * - the caller's `signal` (client gone, shutdown) aborts it too, also while the vendor has not answered yet.
 *
 * `connect` sends the request with the signal it is given; `decoder` turns the response body into canonical events
 * (decodedStream: the stream ends at the vendor's end-of-stream marker, and a frame it cannot read fails it).
 */
export async function openChatStream(signal: CallSignal | undefined, connect: (signal: CallSignal | undefined) => Promise<UpstreamResponse>, decoder: StreamDecoder<ChatStreamEvent>): Promise<ChatStream> {
  // The caller's signal goes to the request itself: undici aborts it when the signal fires, before the head or while the
  // body streams. `close` destroys the body, and undici aborts a request whose body is destroyed before its end. So the
  // stream needs no AbortController of its own (one fewer per stream: ~4 µs of a streamed call, issue 16).
  const response = await connect(signal);
  return createChatStream(decodedStream(response.body, decoder));
}

/** The ChatStream over `source` (batches of events). See `openChatStream` for the contract. */
export function createChatStream(source: PushSource<readonly ChatStreamEvent[]>): ChatStream {
  let read = false;
  // Read by iteration: closing ends a read that waits, as well as the source.
  let reader: AsyncIterableIterator<readonly ChatStreamEvent[]> | undefined;
  const once = (): void => {
    if (read) throw new Error('A chat stream can be read only once.');
    read = true;
  };
  async function* events(batches: AsyncIterableIterator<readonly ChatStreamEvent[]>): AsyncGenerator<ChatStreamEvent> {
    // Leaving this loop early returns the batch iterator, which closes the stream.
    for await (const batch of batches) {
      for (let index = 0; index < batch.length; index++) yield batch[index]!;
    }
  }
  return {
    [Symbol.asyncIterator]: () => {
      once();
      reader = pulled(source);
      return events(reader);
    },
    source: () => {
      once();
      return source;
    },
    close: () => void (reader ? reader.return!() : source.close()),
  };
}
