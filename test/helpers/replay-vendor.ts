import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A tiny stand-in for the vendor that answers POST /v1/messages by replaying recorded SSE bytes
 * (`test/__fixtures__/*.chunks.txt`, the vendor's exact wire format), so tests control every usage field.
 */

export interface ReplayScript {
  /** The raw `text/event-stream` body to send. */
  chunks: string;
  /** `finish` ends the response cleanly; `destroy` drops the connection after the last byte (a cut-off stream). */
  ending: 'finish' | 'destroy';
  /** When set, frames are written one by one with this pause between them. */
  frameDelayMs?: number;
}

export interface ReplayExchange {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Set when the gateway closed the connection before the whole script was sent. */
  closedEarly: boolean;
  /** Resolves when the vendor side of the exchange is over (finished, dropped or closed by the gateway). */
  done: Promise<void>;
}

export interface ReplayVendor {
  url: string;
  exchanges: ReplayExchange[];
  /** The script the next request gets. */
  play(script: ReplayScript): void;
  close(): Promise<void>;
}

export const fixture = (name: string): string => readFileSync(new URL(`../__fixtures__/${name}`, import.meta.url), 'utf8');

/** The frames of an SSE body, each with its terminating blank line. */
const framesOf = (chunks: string): string[] => chunks.split(/(?<=\n\n)/).filter((frame) => frame.trim() !== '');

export async function startReplayVendor(): Promise<ReplayVendor> {
  let script: ReplayScript | undefined;
  const exchanges: ReplayExchange[] = [];
  const server = createServer((request, response) => {
    const parts: Buffer[] = [];
    request.on('data', (part: Buffer) => parts.push(part));
    request.on('end', () => {
      let finish: () => void = () => {};
      const exchange: ReplayExchange = {
        path: request.url ?? '/',
        headers: request.headers,
        body: Buffer.concat(parts).toString('utf8'),
        closedEarly: false,
        done: new Promise<void>((resolve) => (finish = resolve)),
      };
      exchanges.push(exchange);
      const current = script;
      if (!current) {
        response.writeHead(500, { 'content-type': 'application/json' }).end('{"type":"error","error":{"type":"api_error","message":"no script"}}');
        finish();
        return;
      }
      let complete = false;
      response.on('close', () => {
        if (!complete) exchange.closedEarly = true;
        finish();
      });
      void (async () => {
        response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'request-id': 'req_01Replay' });
        const frames = current.frameDelayMs ? framesOf(current.chunks) : [current.chunks];
        for (const [index, frame] of frames.entries()) {
          if (response.destroyed) return;
          if (index < frames.length - 1) {
            response.write(frame);
            await sleep(current.frameDelayMs ?? 0);
            continue;
          }
          complete = true;
          if (current.ending === 'destroy') response.write(frame, () => response.socket?.destroy());
          else response.end(frame);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    play(next) {
      script = next;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
