/**
 * The rules of one dialect for relaying an upstream stream to a client. A rule set is made per request (it keeps what
 * the charge needs: usage, text produced) and used by one `relayStream`.
 */
export interface RelayDialect<Event> {
  /** The whole SSE frame to send for an upstream event, or undefined to drop it. Pass-through frames should not be re-serialised. */
  frame(event: Event): string | undefined;
  /** Whether the relay stops after this event's frame (a vendor error inside the stream). */
  ends(event: Event): boolean;
  /** The frame that closes a stream the vendor finished (OpenAI's `[DONE]`); undefined for none. */
  finished(): string | undefined;
  /** Books the charge from what was seen; called exactly once, however the relay ends. */
  charge(): void;
}

/**
 * The one relay from an upstream stream to a client: iterates the source a batch at a time (the events one read of the
 * vendor's body completed), sends each batch's frames as the dialect frames them, joined into one string, and when it
 * ends for any reason — finished, vendor error, connection lost, or the client gone (`return()` on this generator, see
 * http/event-stream.ts) — closes the upstream (`close`, which aborts the request) and books the charge once. Frames made
 * before a rule throws are still sent, as they were one by one.
 */
export async function* relayStream<Event>(source: AsyncIterable<readonly Event[]>, close: () => void, dialect: RelayDialect<Event>): AsyncGenerator<string> {
  try {
    for await (const events of source) {
      let text = '';
      let ended = false;
      try {
        for (let index = 0; index < events.length && !ended; index++) {
          const event = events[index]!;
          const frame = dialect.frame(event);
          if (frame !== undefined) text += frame;
          ended = dialect.ends(event);
        }
      } catch (error) {
        if (text !== '') yield text;
        throw error;
      }
      if (text !== '') yield text;
      if (ended) return;
    }
    const last = dialect.finished();
    if (last !== undefined) yield last;
  } finally {
    close();
    dialect.charge();
  }
}
