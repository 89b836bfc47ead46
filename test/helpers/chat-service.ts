import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the local chat service took (answered 200). */
export interface ChatServiceDelivery {
  headers: IncomingHttpHeaders;
  json: Record<string, unknown>;
}

/**
 * A local stand-in for the live-chat service's bot endpoint (Jivo's protocol, PROTOCOLS §3): records every POST and
 * answers 200 `{}`; can answer 503 for a while (`unavailable`) or be down (`stop()` closes the port, `start()` reopens it).
 */
export interface FakeChatService {
  url: string;
  /** Events accepted (answered 200), in arrival order. */
  delivered: ChatServiceDelivery[];
  /** Every request that reached the service, accepted or not. */
  attempts: number;
  unavailable: boolean;
  /** Events of one kind, in order. */
  events(kind: string): Array<Record<string, unknown>>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startChatService(): Promise<FakeChatService> {
  let port = 0;
  const service: FakeChatService = {
    url: '',
    delivered: [],
    attempts: 0,
    unavailable: false,
    events: (kind) => service.delivered.map((delivery) => delivery.json).filter((json) => json.event === kind),
    stop: () => close(),
    start: () => listen(),
    close: () => close(),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      service.attempts += 1;
      if (request.method !== 'POST') return void response.writeHead(405).end();
      if (service.unavailable) return void response.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"code":"unavailable","message":"try later"}}');
      let json: unknown;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return void response.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"bad_format","message":"not JSON"}}');
      }
      service.delivered.push({ headers: request.headers, json: json as Record<string, unknown> });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const listen = (): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const close = (): Promise<void> => {
    if (!server.listening) return Promise.resolve();
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen();
  service.url = `http://127.0.0.1:${port}/jivo/hook`;
  return service;
}
