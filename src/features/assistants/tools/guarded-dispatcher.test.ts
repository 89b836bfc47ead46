import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startFunctionServer } from '../../../../test/helpers/function-server.ts';
import { guardedDispatcher } from './guarded-dispatcher.ts';

// `refuseUrl` checks a URL before a call; the dispatcher checks again where the connection is made, so a name that
// resolves to a private address by then (DNS rebinding) is still refused.
test('the public-only dispatcher refuses a host name that resolves to a loopback address', async () => {
  const server = await startFunctionServer((_request, response) => response.end('reached'));
  const port = new URL(server.url).port;
  try {
    await assert.rejects(request(`http://localhost:${port}/`, { dispatcher: guardedDispatcher(false) }), /localhost resolves to a private or loopback address/);
    assert.equal(server.requests.length, 0);
    const allowed = await request(`http://localhost:${port}/`, { dispatcher: guardedDispatcher(true) });
    assert.equal(await allowed.body.text(), 'reached');
  } finally {
    await server.close();
  }
});
