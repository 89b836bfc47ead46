// The floor under the gateway's figures: one Node proxy hop with nothing else in it — node:http in front, an undici Pool to
// the simulator behind, the request body read and forwarded, the answer read and copied back. No key check, routing,
// billing, logging or validation. bench/proxy-floor.ts measures it at concurrency 1 beside "direct" and at saturation in
// the same run, so the gateway's added latency, req/s and CPU a call can be read against what any Node proxy on this
// machine does at that moment.
// Run as its own process: BARE_PROXY_PORT, BARE_PROXY_UPSTREAM (the simulator's origin).

import { createServer } from 'node:http';
import { Pool, type Dispatcher } from 'undici';

const port = Number(process.env.BARE_PROXY_PORT);
const upstreamOrigin = process.env.BARE_PROXY_UPSTREAM;
if (!Number.isInteger(port) || !upstreamOrigin) throw new Error('set BARE_PROXY_PORT and BARE_PROXY_UPSTREAM');
const upstream = new Pool(upstreamOrigin, { connections: 64 });

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    upstream
      .request({
        path: request.url ?? '/',
        method: (request.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: { 'content-type': request.headers['content-type'] ?? 'application/json', authorization: request.headers.authorization ?? '' },
        body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
      })
      .then(async (answer) => {
        const body = Buffer.from(await answer.body.arrayBuffer());
        response.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json'), 'content-length': body.length });
        response.end(body);
      })
      .catch((error: unknown) => {
        response.writeHead(502, { 'content-type': 'text/plain' });
        response.end(error instanceof Error ? error.message : String(error));
      });
  });
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void upstream.close().then(() => process.exit(0))));
