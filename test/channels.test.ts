import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Simulator } from '../simulator/server.ts';
import { errorA, sseData } from './helpers/e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import {
  ask,
  assertChargedOnce,
  channelHealth,
  chat,
  chatCalls,
  inParallel,
  putPool,
  requestRows,
  startChannelSimulator,
} from './helpers/channels.ts';

/**
 * Upstream channels (issue 15, DESIGN §12): traffic shared by weight, failover, cool-down and the half-open probe, 429
 * with retry-after, streams never retried after their first byte, and money charged once — counted at three simulators
 * standing in for three vendor endpoints. Routing lives in memory, so these run on SQLite; channels.storage.test.ts runs
 * the admin API, storage and fallbacks on both engines.
 */
describe('channel routing (three simulated vendor endpoints)', () => {
  let gw: TestGateway;
  const sims: Simulator[] = [];
  let key: string;
  let userId: string;
  let pools = 0;
  /** A fresh provider per test: its channels start healthy. */
  const pool = (): { provider: string; model: string } => ({ provider: `pool${++pools}`, model: `pool-model-${pools}` });

  before(async () => {
    for (let index = 0; index < 3; index++) sims.push(await startChannelSimulator());
    gw = await startTestGateway({ config: { upstreamTimeoutMs: 400 } });
    ({ key, userId } = await gw.fundedKey({ balance: '1000.00' }));
  });
  after(async () => {
    await gw.close();
    for (const sim of sims) await sim.close();
  });
  beforeEach(() => {
    for (const sim of sims) sim.reset();
  });

  test('weights 3 : 1 : 0 share 2,000 requests within ±5 % at the vendors; every request charged once, its channel logged', async () => {
    const { provider, model } = pool();
    const [a, b, c] = sims as [Simulator, Simulator, Simulator];
    await putPool(gw, provider, [{ id: 'a', simulator: a, weight: 3 }, { id: 'b', simulator: b, weight: 1 }, { id: 'c', simulator: c, weight: 0 }], { id: model });
    const statuses = new Map<number, number>();
    await inParallel(2_000, 16, async (index) => {
      const response = await chat(gw, key, ask(model, `request ${index}`));
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    });
    assert.deepEqual([...statuses], [[200, 2_000]]);
    const served = [chatCalls(a), chatCalls(b), chatCalls(c)];
    assert.ok(Math.abs(served[0]! - 1_500) <= 75, `channel a (weight 3) served ${served[0]}, expected 1,500 ± 5 %`);
    assert.ok(Math.abs(served[1]! - 500) <= 25, `channel b (weight 1) served ${served[1]}, expected 500 ± 5 %`);
    assert.equal(served[2], 0, 'weight 0 takes no traffic');
    const health = await channelHealth(gw, provider);
    assert.deepEqual([health.get('a')?.requests, health.get('b')?.requests, health.get('c')?.requests], served);
    assert.equal(health.get('a')?.state, 'healthy');
    assert.ok((health.get('a')?.latencyMs.p50 ?? -1) >= 0 && (health.get('a')?.latencyMs.p99 ?? -1) >= (health.get('a')?.latencyMs.p50 ?? 0));

    const rows = (await requestRows(gw, userId)).filter((row) => row.model === model);
    assert.equal(rows.length, 2_000);
    const byChannel = (id: string) => rows.filter((row) => row.channel === id && row.provider === provider && row.attempts === 1).length;
    assert.deepEqual([byChannel('a'), byChannel('b'), byChannel('c')], served, 'the request log names the channel that served');
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.ok(rows.every((row) => (charges.get(row.id) ?? 0n) > 0n), 'every request was charged');
  });

  test('a channel killed mid-run gets no traffic once its cool-down starts, clients never see it, and a half-open probe brings it back', async () => {
    const { provider, model } = pool();
    const [a] = sims as [Simulator];
    let b = sims[1]!;
    await putPool(gw, provider, [{ id: 'a', simulator: a }, { id: 'b', simulator: b }], { id: model });
    for (let index = 0; index < 10; index++) assert.equal((await chat(gw, key, ask(model))).status, 200);
    assert.equal(chatCalls(b), 5, 'b took its half before it died');
    const port = b.port;
    await b.close();

    for (let index = 0; index < 20; index++) {
      const response = await chat(gw, key, ask(model, `while b is down ${index}`));
      assert.equal(response.status, 200, `request ${index} failed over: ${response.text}`);
    }
    let health = await channelHealth(gw, provider);
    assert.equal(health.get('b')?.state, 'cooling');
    assert.equal(health.get('b')?.errors, 3, 'three connection errors in a row start the cool-down; then no more attempts');
    assert.equal(health.get('b')?.requests, 5 + 3);
    const rows = (await requestRows(gw, userId)).filter((row) => row.model === model);
    assert.deepEqual(
      rows.filter((row) => row.attempts === 2).map((row) => [row.channel, row.status]),
      [['a', 200], ['a', 200], ['a', 200]],
      'the three requests that met the dead channel were served by a on their second attempt',
    );

    b = await startChannelSimulator(port);
    sims[1] = b;
    gw.clock.advance(999);
    for (let index = 0; index < 5; index++) await chat(gw, key, ask(model));
    assert.equal(chatCalls(b), 0, 'no traffic while the cool-down lasts, though the vendor is back');
    gw.clock.advance(2);
    assert.equal((await channelHealth(gw, provider)).get('b')?.state, 'probing');
    for (let index = 0; index < 10; index++) assert.equal((await chat(gw, key, ask(model))).status, 200);
    health = await channelHealth(gw, provider);
    assert.equal(health.get('b')?.state, 'healthy', 'the probe succeeded');
    assert.ok(chatCalls(b) >= 4, `b serves its share again (${chatCalls(b)} of 10)`);
    await assertChargedOnce(gw, userId, await requestRows(gw, userId));
  });

  test('429 with retry-after: no traffic to that channel until retry-after has passed; every channel rate-limited → 429 with the soonest retry-after, not charged', async () => {
    const { provider, model } = pool();
    const [a, b] = sims as [Simulator, Simulator];
    await putPool(gw, provider, [{ id: 'a', simulator: a }, { id: 'b', simulator: b }], { id: model });
    b.addFault({ status: 429, headers: { 'retry-after': '30' }, match: { path: '/v1/chat/completions' } });
    for (let index = 0; index < 4; index++) assert.equal((await chat(gw, key, ask(model))).status, 200);
    assert.equal(chatCalls(b), 1, 'b answered 429 once');
    assert.equal((await channelHealth(gw, provider)).get('b')?.state, 'cooling');
    for (let index = 0; index < 20; index++) await chat(gw, key, ask(model));
    gw.clock.advance(29_000);
    for (let index = 0; index < 10; index++) await chat(gw, key, ask(model));
    assert.equal(chatCalls(b), 1, 'nothing reached b before its retry-after passed');
    gw.clock.advance(1_001);
    for (let index = 0; index < 10; index++) await chat(gw, key, ask(model));
    assert.ok(chatCalls(b) >= 5, `b serves again after retry-after (${chatCalls(b) - 1} of 10)`);

    const before = await gw.balance({ userId });
    a.addFault({ status: 429, headers: { 'retry-after': '20' }, match: { path: '/v1/chat/completions' } });
    b.addFault({ status: 429, headers: { 'retry-after': '45' }, match: { path: '/v1/chat/completions' } });
    const limited = await chat(gw, key, ask(model));
    assert.equal(limited.status, 429, limited.text);
    assert.equal(errorA(limited.json).type, 'rate_limit_error');
    assert.equal(limited.headers.get('retry-after'), '20', 'the soonest of the channels');
    gw.clock.advance(5_000);
    const calls = chatCalls(a) + chatCalls(b);
    const again = await chat(gw, key, ask(model));
    assert.equal(again.status, 429);
    assert.equal(again.headers.get('retry-after'), '15');
    assert.equal(chatCalls(a) + chatCalls(b), calls, 'no vendor call while every channel waits');
    assert.equal(await gw.balance({ userId }), before, 'not charged');
    const rows = (await requestRows(gw, userId)).filter((row) => row.model === model && row.status === 429);
    assert.deepEqual(rows.map((row) => [row.attempts, micros(row.cost)]).reverse(), [[2, 0n], [0, 0n]], 'two attempts, then none; free');
  });

  test('a channel that hangs past the upstream timeout fails over; all hanging → 504, not charged', async () => {
    const { provider, model } = pool();
    const [a, b] = sims as [Simulator, Simulator];
    await putPool(gw, provider, [{ id: 'a', simulator: a, priority: 1 }, { id: 'b', simulator: b }], { id: model });
    a.addFault({ delayMs: 1_500, match: { path: '/v1/chat/completions' } });
    const response = await chat(gw, key, ask(model));
    assert.equal(response.status, 200, response.text);
    const [row] = (await requestRows(gw, userId)).filter((entry) => entry.model === model);
    assert.deepEqual([row?.channel, row?.attempts], ['b', 2], 'priority 1 (a) first; after its timeout, b');

    const before = await gw.balance({ userId });
    a.addFault({ delayMs: 1_500, match: { path: '/v1/chat/completions' } });
    b.addFault({ delayMs: 1_500, match: { path: '/v1/chat/completions' } });
    const timedOut = await chat(gw, key, ask(model));
    assert.equal(timedOut.status, 504, timedOut.text);
    assert.equal(errorA(timedOut.json).type, 'timeout_error');
    assert.equal(await gw.balance({ userId }), before);
  });

  test('5xx fails over, also for a stream before its first byte; a stream cut after bytes reached the client is never retried and is charged as a cut stream', async () => {
    const { provider, model } = pool();
    const [a, b] = sims as [Simulator, Simulator];
    await putPool(gw, provider, [{ id: 'a', simulator: a, priority: 1 }, { id: 'b', simulator: b }], { id: model });
    a.addFault({ status: 500, match: { path: '/v1/chat/completions' } });
    const failedOver = await chat(gw, key, ask(model, 'stream please', { stream: true }));
    assert.equal(failedOver.status, 200);
    assert.equal(sseData(failedOver.text).at(-1), '[DONE]');
    assert.deepEqual([chatCalls(a), chatCalls(b)], [1, 1]);

    a.addFault({ cutAfterChunks: 2, match: { path: '/v1/chat/completions' } });
    const cut = await chat(gw, key, ask(model, 'cut me', { stream: true }));
    assert.equal(cut.status, 200);
    assert.notEqual(sseData(cut.text).at(-1), '[DONE]', 'the client sees the cut');
    assert.deepEqual([chatCalls(a), chatCalls(b)], [2, 1], 'not retried on b');
    const rows = (await requestRows(gw, userId)).filter((row) => row.model === model);
    const [cutRow, firstRow] = rows;
    assert.deepEqual([cutRow?.channel, cutRow?.attempts, firstRow?.channel, firstRow?.attempts], ['a', 1, 'b', 2]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.ok((charges.get(cutRow!.id) ?? 0n) > 0n, 'the cut stream is charged for what was produced (estimated)');
  });

  test('channels listing models serve only those; a model no channel serves answers 502, not charged', async () => {
    const { provider, model } = pool();
    const [a, b] = sims as [Simulator, Simulator];
    const other = `${model}-other`;
    await putPool(gw, provider, [{ id: 'a', simulator: a, models: [model] }, { id: 'b', simulator: b, models: [other] }], { id: model });
    for (let index = 0; index < 4; index++) assert.equal((await chat(gw, key, ask(model))).status, 200);
    assert.deepEqual([chatCalls(a), chatCalls(b)], [4, 0]);
    const third = `${model}-third`;
    assert.equal((await gw.admin('PUT', `/models/${third}`, { kind: 'chat', provider, upstreamModel: 'gpt-4o-mini' })).status, 200);
    const before = await gw.balance({ userId });
    const none = await chat(gw, key, ask(third));
    assert.equal(none.status, 502, none.text);
    assert.equal(errorA(none.json).type, 'upstream_error');
    assert.equal(await gw.balance({ userId }), before);
  });
});

describe('channel metrics', () => {
  test('/metrics labels each channel as <provider>/<channel id>', async () => {
    const sim = await startChannelSimulator();
    const gw = await startTestGateway({});
    try {
      const { key } = await gw.fundedKey();
      await putPool(gw, 'metered', [{ id: 'east', simulator: sim }], { id: 'metered-model' });
      assert.equal((await chat(gw, key, ask('metered-model'))).status, 200);
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      assert.match(text, /tollgate_upstream_channel_requests_total\{channel="metered\/east"\} 1/);
      assert.match(text, /tollgate_upstream_channel_state\{channel="metered\/east",state="healthy"\} 1/);
      assert.match(text, /tollgate_upstream_channel_latency_ms\{channel="metered\/east",quantile="0.99"\} \d/);
      assert.match(text, /tollgate_upstream_channel_errors_total\{channel="metered\/east"\} 0/);
    } finally {
      await gw.close();
      await sim.close();
    }
  });
});
