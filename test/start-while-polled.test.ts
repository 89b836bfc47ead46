import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { spawnGateway } from './helpers/gateway-process.ts';

const freePort = (): Promise<number> =>
  new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });

/**
 * The port is held from the very start (so a busy port fails before anything is written); a load balancer or benchmark polling
 * /healthz meanwhile must not keep the gateway from listening (it once exited 0 instead: the held connection stalled the hand-over).
 */
test('a gateway polled on its port while it starts still comes up and answers', async () => {
  const port = await freePort();
  let polling = true;
  let answered = false;
  const poller = (async () => {
    while (polling) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) });
        await response.arrayBuffer();
        if (response.ok) answered = true;
      } catch {
        // not listening yet
      }
      await new Promise((done) => setTimeout(done, 20));
    }
  })();
  const gateway = await spawnGateway({ env: { PORT: String(port) } });
  try {
    for (let attempt = 0; attempt < 100 && !answered; attempt += 1) await new Promise((done) => setTimeout(done, 50));
    assert.ok(answered, 'the poller reached the gateway');
    assert.equal((await fetch(`${gateway.url}/healthz`)).status, 200);
  } finally {
    polling = false;
    await poller;
    gateway.child.kill('SIGTERM');
    assert.equal((await gateway.exited).code, 0);
  }
});
