import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { PushSource } from './push-stream.ts';

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
 * Writes a push source's frames to a response as they come, honouring back-pressure (the source is paused while the
 * response's buffer is full, resumed on `drain`). Resolves true when the source ended, false when the client went away
 * first (the source is then closed, which aborts the upstream, and awaited: its charge is booked); rejects with the
 * source's failure.
 *
 * Frames that arrive in the same tick (several reads of the vendor's body handled in one turn of the event loop) go out
 * as one write at the end of that tick, as one chunk of the chunked encoding (`writeChunk`). No frame waits longer than
 * the tick it arrived in; whatever is pending is written before this settles, so an error frame the caller writes after
 * comes after it.
 */
export function sendFrames(response: ServerResponse, frames: PushSource<string>, onFirstFrame?: () => void): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    let first = true;
    let pending = '';
    let scheduled = false;
    let settled = false;
    let headSent = false;
    /** What a full buffer's `drain` is awaited on: the socket written to, or the response. */
    let draining: NodeJS.EventEmitter | undefined;
    const flush = (): void => {
      scheduled = false;
      if (pending === '') return;
      const text = pending;
      pending = '';
      if (response.destroyed || response.writableEnded) return;
      const socket = headSent ? chunkSocket(response) : undefined;
      headSent = true;
      const written = socket ? socket.write(chunkOf(text)) : response.write(text);
      if (!written && !draining && !settled) {
        draining = socket ?? response;
        frames.pause();
        draining.once('drain', onDrain);
      }
    };
    const onDrain = (): void => {
      draining = undefined;
      if (!settled) frames.resume();
    };
    const done = (): void => {
      settled = true;
      flush();
      response.off('close', onClose);
      draining?.off('drain', onDrain);
    };
    const onClose = (): void => {
      if (settled) return;
      done();
      frames.close().then(() => resolve(false), reject);
    };
    response.on('close', onClose);
    if (response.destroyed) {
      onClose();
      return;
    }
    frames.start({
      next(text) {
        if (settled) return;
        if (first) {
          first = false;
          onFirstFrame?.();
        }
        pending += text;
        if (pending.length >= COALESCE_LIMIT) flush();
        else if (!scheduled) {
          scheduled = true;
          process.nextTick(flush);
        }
      },
      end() {
        if (settled) return;
        done();
        resolve(!response.destroyed);
      },
      fail(error) {
        if (settled) return;
        done();
        reject(error);
      },
    });
  });
}

/**
 * The socket a chunk of `response` can be written to directly: a chunked response whose head has gone (its first write
 * carried it) and which is the socket's current message (`_httpMessage`, set by Node's server; a pipelined response
 * waiting its turn has no socket yet). `response.write` makes four writes of the socket per chunk — the size line, a
 * CRLF, the text, a CRLF — which Node buffers behind a cork until the next tick and then hands to writev: four buffer
 * entries, a tick and an array per frame. One string written straight to the socket is one entry, written at once
 * (issue 16: Node's writable machinery was ~40 % of what a held stream allocated after the relay itself was pushed).
 * Anything else (HTTP/1.0, a message not yet on its socket) goes through `response.write`.
 */
function chunkSocket(response: ServerResponse): Socket | undefined {
  const socket = response.socket;
  if (!response.chunkedEncoding || socket === null || socket.destroyed) return undefined;
  return (socket as Socket & { _httpMessage?: unknown })._httpMessage === response ? socket : undefined;
}

/** One chunk of the chunked encoding (RFC 9112 §7.1): the text's size in bytes in hex, CRLF, the text, CRLF. */
function chunkOf(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}
