import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SqlLedgerRepository } from '../src/storage/ledger-repository.ts';
import { startTestGateway } from './helpers/gateway.ts';

const chatBody = (content = 'hello') => JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

test('healthz answers without a key and every response has a request id', async () => {
  const gw = await startTestGateway();
  try {
    const health = await fetch(`${gw.url}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { ok: true });
    assert.match(health.headers.get('x-request-id') ?? '', /^req_/);
    const missing = await fetch(`${gw.url}/v1/nothing-here`, { headers: { authorization: 'Bearer x' } });
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('x-request-id') ?? '', /^req_/);
    const body = (await missing.json()) as { error: { type: string } };
    assert.equal(body.error.type, 'invalid_request_error');
  } finally {
    await gw.close();
  }
});

test('metrics count requests, tokens and money charged', async () => {
  const gw = await startTestGateway();
  try {
    const { key } = await gw.fundedKey();
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: chatBody() });
    const usage = ((await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number; total_cost: number } }).usage;
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /tollgate_http_requests_total\{route="chat.completions",status="200"\} 1/);
    assert.match(metrics, new RegExp(`tollgate_tokens_total\\{model="gpt-4o-mini",direction="input"\\} ${usage.prompt_tokens}`));
    assert.match(metrics, new RegExp(`tollgate_tokens_total\\{model="gpt-4o-mini",direction="output"\\} ${usage.completion_tokens}`));
    const charged = /tollgate_money_charged_total\{currency="USD"\} ([0-9.e-]+)/.exec(metrics);
    assert.ok(charged, 'money charged metric present');
    assert.ok(Math.abs(Number(charged[1]) - usage.total_cost) < 1e-9);
    assert.match(metrics, /tollgate_http_request_duration_seconds_bucket/);
  } finally {
    await gw.close();
  }
});

test('logs never contain an API key, even for failing requests', async () => {
  const gw = await startTestGateway({ captureLogs: true });
  try {
    const { key } = await gw.fundedKey();
    gw.simulator.addFault({ status: 500, match: { path: '/v1/chat/completions' } });
    const failed = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: chatBody() });
    assert.equal(failed.status, 502);
    await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{broken' });
    assert.ok(gw.logLines.length > 0, 'something was logged');
    const all = gw.logLines.join('\n');
    assert.ok(!all.includes(key), 'an API key was logged');
    assert.ok(!all.includes(key.slice(3)), 'part of an API key was logged');
  } finally {
    await gw.close();
  }
});

test('a vendor slower than the upstream timeout gives 504 and costs nothing', async () => {
  const gw = await startTestGateway({ config: { upstreamTimeoutMs: 150 } });
  try {
    const { key, userId } = await gw.fundedKey({ balance: '1.00' });
    gw.simulator.addFault({ delayMs: 2500, match: { path: '/v1/chat/completions' } });
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: chatBody() });
    assert.equal(response.status, 504);
    const body = (await response.json()) as { error: { type: string } };
    assert.equal(body.error.type, 'timeout_error');
    assert.equal(await gw.balance({ userId }), '1.00');
  } finally {
    await gw.close();
  }
});

test('a graceful stop finishes the request in flight and writes its charge', async () => {
  const gw = await startTestGateway({ config: { ledgerFlushMs: 10_000 } });
  const { key, userId } = await gw.fundedKey({ balance: '1.00' });
  gw.simulator.options.latencyMs = 300;
  const inFlight = fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: chatBody() });
  await new Promise((resolve) => setTimeout(resolve, 100));
  const closing = gw.app.close();
  const response = await inFlight;
  assert.equal(response.status, 200);
  const cost = ((await response.json()) as { usage: { total_cost: number } }).usage.total_cost;
  await closing;
  // The ledger flush interval was 10 s: only the shutdown flush can have written the charge.
  const ledger = new SqlLedgerRepository(gw.storage.db);
  const balance = await ledger.balance({ type: 'user', id: userId });
  assert.equal(balance, 1_000_000_000n - BigInt(Math.round(cost * 1e9)));
  assert.equal(await ledger.sum({ type: 'user', id: userId }), balance);
  gw.simulator.options.latencyMs = 0;
  await gw.storage.close();
  await gw.simulator.close();
});
