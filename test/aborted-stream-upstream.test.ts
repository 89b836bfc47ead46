import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { startTestGateway } from './helpers/gateway.ts';

/** A TCP relay in front of the simulator that knows how many of the gateway's connections are open. */
async function connectionCounter(target: Simulator): Promise<{ url: string; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    sockets.add(inbound);
    const outbound = connect({ host: '127.0.0.1', port: target.port });
    inbound.pipe(outbound).pipe(inbound);
    const end = (): void => {
      sockets.delete(inbound);
      inbound.destroy();
      outbound.destroy();
    };
    inbound.once('close', end);
    outbound.once('close', end);
    inbound.on('error', end);
    outbound.on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    open: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const cases = [
  { name: 'chat completions (OpenAI)', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hello' }] } },
  { name: 'chat completions (Claude)', path: '/v1/chat/completions', body: { model: 'claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'hello' }] } },
  { name: 'responses (OpenAI)', path: '/v1/responses', body: { model: 'gpt-4o-mini', stream: true, input: 'hello' } },
  { name: 'responses (Claude)', path: '/v1/responses', body: { model: 'claude-sonnet-4-5', stream: true, input: 'hello' } },
  { name: 'messages', path: '/v1/messages', body: { model: 'claude-sonnet-4-5', max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'hello' }] } },
];

for (const { name, path, body } of cases) {
  test(`${name}: when the client leaves a stream, the upstream connection is closed at once`, { timeout: 20_000 }, async () => {
    // A long stream: chunks 3 s apart, so only an abort (not the next write failing) can close the connection within a second.
    const simulator = await startSimulator({ chunkDelayMs: 3_000, streamChunks: 8, replyTokens: 64 });
    const counter = await connectionCounter(simulator);
    const gw = await startTestGateway({ simulator: { ...simulator, url: counter.url } });
    try {
      const { key } = await gw.fundedKey();
      const abort = new AbortController();
      const response = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(body),
        signal: abort.signal,
      });
      assert.equal(response.status, 200);
      await response.body!.getReader().read();
      assert.equal(counter.open(), 1, 'the stream holds one upstream connection');
      abort.abort();
      const left = Date.now();
      while (counter.open() > 0 && Date.now() - left < 5_000) await sleep(10);
      assert.equal(counter.open(), 0, 'the upstream connection is still open 5 s after the client left');
      assert.ok(Date.now() - left < 1_000, `the upstream connection closed ${Date.now() - left} ms after the client left`);
    } finally {
      await gw.close();
      await counter.close();
      await simulator.close();
    }
  });
}
