import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature } from '../../src/features/webhooks/signature.ts';
import type { Clock } from '../../src/lib/clock.ts';

/** What a receiver does with the n-th request (1-based): answer with a status, or never answer. */
export type ReceiverBehaviour = (attempt: number) => number | 'hang';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: unknown;
  /** `verifySignature` over the raw bytes with the receiver's API key, at the injected clock's time. */
  verified: boolean;
  /** The `t` of X-Tollgate-Signature. */
  t: number | undefined;
  /** The `v1` of X-Tollgate-Signature. */
  v1: string | undefined;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const header = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

/**
 * A local webhook receiver (node:http on 127.0.0.1), as a user would write one: it reads the raw body, verifies the
 * signature with the API key that created the task (tolerance 300 s against the injected clock), and answers as told.
 */
export async function startWebhookReceiver(options: { apiKey: () => string; clock: Clock; behaviour?: ReceiverBehaviour }): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const behaviour = options.behaviour ?? (() => 200);
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const signature = header(request.headers, 'x-tollgate-signature');
      let json: unknown;
      try {
        json = JSON.parse(rawBody.toString('utf8'));
      } catch {
        json = undefined;
      }
      const t = /(?:^|,)t=(\d+)/.exec(signature ?? '')?.[1];
      received.push({
        headers: request.headers,
        rawBody,
        json,
        verified: verifySignature(rawBody, signature, options.apiKey(), 300, Math.floor(options.clock.now() / 1000)),
        t: t === undefined ? undefined : Number(t),
        v1: /(?:^|,)v1=([0-9a-f]+)/.exec(signature ?? '')?.[1],
      });
      for (const waiter of waiting.filter((entry) => received.length >= entry.count)) waiter.resolve();
      const action = behaviour(received.length);
      if (action === 'hang') return;
      response.writeHead(action, { 'content-type': 'text/plain' }).end(action < 300 ? 'ok' : 'nope');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    waitFor(count, timeoutMs = 3_000) {
      if (received.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${count} requests`)), timeoutMs);
        waiting.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
    close() {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
