import type { ServerResponse } from 'node:http';

/** One server-sent event; the event name may not hold CR or LF (it would forge frames). */
export function sseFrame(data: string, event?: string): string {
  // A payload of several lines (a vendor's pretty-printed frame passed on) goes as one `data:` line each; a reader joins
  // them with line feeds again (WHATWG server-sent events), so the JSON it parses is the same.
  const lines = data.includes('\n') || data.includes('\r') ? data.replace(/\r\n|\r|\n/g, '\ndata: ') : data;
  if (event !== undefined) {
    if (/[\r\n]/.test(event)) throw new Error('SSE event names cannot contain CR or LF');
    return `event: ${event}\ndata: ${lines}\n\n`;
  }
  return `data: ${lines}\n\n`;
}

/** Above this many characters of frames waiting for the end of the tick, they are written at once (back-pressure applies). */
const COALESCE_LIMIT = 65_536;

/**
 * Writes frames to a response as they come, honouring back-pressure. Stops (and returns false) when the client has gone;
 * the caller then closes its source, which aborts the upstream call.
 *
 * Frames that arrive in the same tick (several frames in one read of the vendor's body) go out as one write at the end of
 * that tick, as one chunk of the chunked encoding: Node corks a response's socket until the next tick anyway, but each
 * `write` adds its own chunk header, buffer entries and strings to encode (issue 16: a 20-frame stream's writes were a
 * third of its CPU). No frame waits longer than the tick it arrived in; whatever is pending is written before this
 * returns or throws, so an error frame the caller writes after comes after it.
 */
export async function writeFrames(response: ServerResponse, frames: AsyncIterable<string>, onFirstFrame?: () => void): Promise<boolean> {
  let first = true;
  let pending = '';
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending === '') return;
    const text = pending;
    pending = '';
    if (response.destroyed || response.writableEnded) return;
    response.write(text);
  };
  try {
    for await (const frame of frames) {
      if (response.destroyed || response.writableEnded) return false;
      if (first) {
        first = false;
        onFirstFrame?.();
      }
      // Back-pressure from an earlier write (it may have drained since: hence the flag, not write's own answer).
      if (response.writableNeedDrain && !(await drained(response))) return false;
      pending += frame;
      if (pending.length >= COALESCE_LIMIT) flush();
      else if (!scheduled) {
        scheduled = true;
        process.nextTick(flush);
      }
    }
  } finally {
    flush();
  }
  return !response.destroyed;
}

/** Resolves true when the response can take more, false when the client went away first. */
function drained(response: ServerResponse): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const onDrain = (): void => {
      response.off('close', onClose);
      resolve(true);
    };
    const onClose = (): void => {
      response.off('drain', onDrain);
      resolve(false);
    };
    response.once('drain', onDrain);
    response.once('close', onClose);
  });
}
