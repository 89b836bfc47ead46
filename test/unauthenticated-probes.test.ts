import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestGateway } from './helpers/gateway.ts';

test('HEAD / answers 200 without a key (clients probe it)', async () => {
  const gw = await startTestGateway();
  try {
    const response = await fetch(`${gw.url}/`, { method: 'HEAD' });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
  } finally {
    await gw.close();
  }
});

test('every 401 says x-should-retry: false, so clients show the error instead of retrying', async () => {
  const gw = await startTestGateway();
  try {
    const chat = (authorization?: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
    const messages = await fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'tg-not-a-key' }, body: '{}' });
    const admin = await fetch(`${gw.url}/admin/v1/users`, { method: 'POST', headers: { authorization: 'Bearer wrong-admin-token' } });
    for (const response of [await chat(), await chat('Bearer tg-not-a-real-key'), messages, admin]) {
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('x-should-retry'), 'false');
      const body = (await response.json()) as { error: { type: string } };
      assert.equal(body.error.type, 'unauthorized_request_error');
    }
  } finally {
    await gw.close();
  }
});

test('unknown paths under /v1, /api and /admin are 401 without a credential and 404 with one; elsewhere 404', async () => {
  const gw = await startTestGateway();
  try {
    const { key } = await gw.fundedKey();
    for (const path of ['/v1/nothing-here', '/v1', '/api/v9/whatever', '/admin/v1/nothing']) {
      const anonymous = await fetch(`${gw.url}${path}`);
      assert.equal(anonymous.status, 401, `${path} without a credential`);
      assert.equal(anonymous.headers.get('x-should-retry'), 'false');
      assert.match(anonymous.headers.get('x-request-id') ?? '', /^req_/);
      assert.equal(((await anonymous.json()) as { error: { type: string } }).error.type, 'unauthorized_request_error');
      const credential = path.startsWith('/admin') ? `Bearer ${gw.adminToken}` : key;
      const known = await fetch(`${gw.url}${path}`, { headers: { authorization: credential } });
      assert.equal(known.status, 404, `${path} with a credential`);
      await known.arrayBuffer();
    }
    const viaApiKeyHeader = await fetch(`${gw.url}/v1/messages/nothing`, { method: 'POST', headers: { 'x-api-key': key } });
    assert.equal(viaApiKeyHeader.status, 404);
    assert.equal(((await viaApiKeyHeader.json()) as { type: string }).type, 'error', 'the messages paths keep their shape B');
    for (const path of ['/nothing', '/v1x/models', '/apis']) {
      const response = await fetch(`${gw.url}${path}`);
      assert.equal(response.status, 404, path);
      await response.arrayBuffer();
    }
  } finally {
    await gw.close();
  }
});
