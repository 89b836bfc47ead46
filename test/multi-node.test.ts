import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { dropPostgresSchema } from '../src/storage/database.ts';
import { micros, POSTGRES_URL, startTestGateway, uniqueSchema, type TestGateway } from './helpers/gateway.ts';

/** Two gateway processes' worth of state (each its own caches and balance book) on one PostgreSQL, joined by Redis. */
describe('two gateway nodes on one PostgreSQL and Redis', () => {
  let simulator: Simulator;
  let first: TestGateway;
  let second: TestGateway;
  const schema = uniqueSchema();

  before(async () => {
    simulator = await startSimulator();
    const database = { url: `${POSTGRES_URL}?schema=${schema}` };
    first = await startTestGateway({ database, simulator, redis: true, redisPrefix: `tg_${schema}:` });
    second = await startTestGateway({ database, simulator, redis: true, redisPrefix: `tg_${schema}:` });
  });

  after(async () => {
    await first.close();
    await second.close();
    await simulator.close();
    await dropPostgresSchema(POSTGRES_URL, schema);
  });

  const chat = (gateway: TestGateway, key: string, model = 'gpt-4o-mini') =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello from a node' }] }),
    });

  test('a key made on one node works on the other, and its revocation stops it on both at once', async () => {
    const { key, keyId } = await first.fundedKey({ balance: '1.00' });
    assert.equal((await chat(second, key)).status, 200);
    assert.equal((await chat(first, key)).status, 200);
    const revoked = await first.admin('DELETE', `/keys/${keyId}`);
    assert.equal(revoked.status, 200);
    // No sleep: the revoking node published before answering; the other node must refuse the very next call.
    await new Promise((resolve) => setImmediate(resolve));
    let status = (await chat(second, key)).status;
    for (let attempt = 0; status !== 401 && attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      status = (await chat(second, key)).status;
    }
    assert.equal(status, 401, 'the second node still accepted a revoked key');
    assert.equal((await chat(first, key)).status, 401);
  });

  test('a model retired on one node is redirected on the other without a restart', async () => {
    const { key } = await first.fundedKey({ balance: '1.00' });
    const patched = await first.admin('PATCH', '/models/gpt-4o-mini', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'gpt-4.1-mini' });
    assert.equal(patched.status, 200);
    let response = await chat(second, key);
    for (let attempt = 0; response.headers.get('x-model-served') !== 'gpt-4.1-mini' && attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      response = await chat(second, key);
    }
    assert.equal(response.headers.get('x-model-served'), 'gpt-4.1-mini');
    await first.admin('PATCH', '/models/gpt-4o-mini', { deprecated_at: null, deprecation_redirect_to: null });
  });

  test('charges made on both nodes add up in the one balance', async () => {
    const { key, userId } = await first.fundedKey({ balance: '2.00' });
    const responses = await Promise.all(Array.from({ length: 20 }, (_, index) => chat(index % 2 === 0 ? first : second, key)));
    let spent = 0n;
    for (const response of responses) {
      assert.equal(response.status, 200);
      const body = (await response.json()) as { usage: { total_cost: number } };
      spent += micros(body.usage.total_cost);
    }
    await second.app.services.book.flush();
    assert.equal(micros(await first.balance({ userId })), micros('2.00') - spent);
  });
});

describe('two gateway nodes on one PostgreSQL without Redis', () => {
  test('a key revoked on one node stops working on the other within a second (database change notices)', async () => {
    const simulator = await startSimulator();
    const schema = uniqueSchema();
    const database = { url: `${POSTGRES_URL}?schema=${schema}` };
    const first = await startTestGateway({ database, simulator, databaseChanges: true });
    const second = await startTestGateway({ database, simulator, databaseChanges: true });
    try {
      const { key, keyId } = await first.fundedKey({ balance: '1.00' });
      const models = (gateway: TestGateway) => fetch(`${gateway.url}/v1/models`, { headers: { authorization: key } });
      assert.equal((await models(second)).status, 200, 'the second node knows the key (and caches it)');
      assert.equal((await first.admin('DELETE', `/keys/${keyId}`)).status, 200);
      const started = Date.now();
      let status = (await models(second)).status;
      while (status !== 401 && Date.now() - started < 1_000) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        status = (await models(second)).status;
      }
      assert.equal(status, 401, 'the second node still accepted the revoked key after a second');
    } finally {
      await first.close();
      await second.close();
      await simulator.close();
      await dropPostgresSchema(POSTGRES_URL, schema);
    }
  });
});
