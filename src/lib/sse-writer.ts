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

/**
 * Writes frames to a response as they come, honouring back-pressure. Stops (and returns false) when the client has gone;
 * the caller then closes its source, which aborts the upstream call.
 */
export async function writeFrames(response: ServerResponse, frames: AsyncIterable<string>, onFirstFrame?: () => void): Promise<boolean> {
  let first = true;
  for await (const frame of frames) {
    if (response.destroyed || response.writableEnded) return false;
    if (first) {
      first = false;
      onFirstFrame?.();
    }
    if (!response.write(frame)) {
      const drained = await new Promise<boolean>((resolve) => {
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
      if (!drained) return false;
    }
  }
  return !response.destroyed;
}
