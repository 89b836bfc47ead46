import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestGateway } from './helpers/gateway.ts';

interface AccessLine {
  msg: string;
  reqId: string;
  keyId?: string;
  route: string;
  status: number;
  latencyMs: number;
  model?: string;
  aborted?: boolean;
}

const accessLines = (lines: string[]): AccessLine[] =>
  lines.map((line) => JSON.parse(line) as AccessLine).filter((line) => line.msg === 'request');

const chatBody = (stream = false) => JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hello' }] });

test('one access-log line per request: request id, key id, route, status, latency, model; never the key or the body', async () => {
  const gw = await startTestGateway({ captureLogs: true });
  try {
    const { key, keyId } = await gw.fundedKey();
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: chatBody() });
    assert.equal(response.status, 200);
    await response.arrayBuffer();
    const requestId = response.headers.get('x-request-id');
    const denied = await fetch(`${gw.url}/v1/models`);
    await denied.arrayBuffer();

    const lines = accessLines(gw.logLines);
    const mine = lines.filter((line) => line.reqId === requestId);
    assert.equal(mine.length, 1, 'exactly one line for the request');
    const [line] = mine;
    assert.equal(line!.keyId, keyId);
    assert.equal(line!.route, 'chat.completions');
    assert.equal(line!.status, 200);
    assert.equal(line!.model, 'gpt-4o-mini');
    assert.equal(typeof line!.latencyMs, 'number');
    const deniedLine = lines.find((entry) => entry.reqId === denied.headers.get('x-request-id'));
    assert.equal(deniedLine?.status, 401);
    assert.equal(deniedLine?.keyId, undefined);
    const all = gw.logLines.join('\n');
    assert.ok(!all.includes(key), 'the key was logged');
    assert.ok(!all.includes('"hello"'), 'the body was logged');
  } finally {
    await gw.close();
  }
});

test('the upstream latency histogram records every vendor call, labelled by provider', async () => {
  const gw = await startTestGateway();
  try {
    const { key } = await gw.fundedKey();
    for (const model of ['gpt-4o-mini', 'claude-sonnet-4-5']) {
      const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(response.status, 200, model);
      await response.arrayBuffer();
    }
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /tollgate_upstream_duration_seconds_count\{provider="openai",operation="chat\/completions"\} 1/);
    assert.match(metrics, /tollgate_upstream_duration_seconds_count\{provider="anthropic",operation="messages"\} 1/);
  } finally {
    await gw.close();
  }
});

test('a stream whose client leaves is still counted, logged and seen by the idle collector', { timeout: 10_000 }, async () => {
  const gw = await startTestGateway({ captureLogs: true });
  try {
    const { key } = await gw.fundedKey();
    gw.simulator.options.chunkDelayMs = 200;
    const before = gw.app.services.activity.requests;
    const abort = new AbortController();
    const response = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: key, 'content-type': 'application/json' }, body: chatBody(true), signal: abort.signal });
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    while (gw.app.services.activity.requests === before) await sleep(10);
    const { started, requests } = gw.app.services.activity;
    assert.equal(started, requests, 'every request begun is answered: none is left counted as in flight');
    const line = accessLines(gw.logLines).find((entry) => entry.reqId === response.headers.get('x-request-id'));
    assert.equal(line?.aborted, true);
    assert.equal(line?.route, 'chat.completions');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    assert.match(metrics, /tollgate_http_requests_total\{route="chat.completions",status="200"\} 1/);
  } finally {
    gw.simulator.options.chunkDelayMs = 0;
    await gw.close();
  }
});

test('TOLLGATE_METRICS_TOKEN protects /metrics with a bearer token', async () => {
  const gw = await startTestGateway({ config: { metricsToken: 'metrics-secret-1234' } });
  try {
    for (const authorization of [undefined, 'Bearer wrong-token', 'Bearer metrics-secret-12345']) {
      const denied = await fetch(`${gw.url}/metrics`, { headers: authorization ? { authorization } : {} });
      assert.equal(denied.status, 401, String(authorization));
      assert.equal(denied.headers.get('x-should-retry'), 'false');
      assert.doesNotMatch(await denied.text(), /tollgate_/);
    }
    const allowed = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer metrics-secret-1234' } });
    assert.equal(allowed.status, 200);
    assert.match(await allowed.text(), /tollgate_http_requests_total/);
  } finally {
    await gw.close();
  }
});
