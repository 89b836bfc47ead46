import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { startSimulator } from '../simulator/server.ts';
import { dropPostgresSchema } from '../src/storage/database.ts';
import { POSTGRES_URL, startTestGateway, uniqueSchema, type TestGateway } from './helpers/gateway.ts';

const chat = (gw: TestGateway, key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'rate me' }] }),
  });

test('a key with a per-minute limit gets 429 with Retry-After, in each endpoint\'s shape, and a new minute resets it', async () => {
  const gw = await startTestGateway();
  try {
    gw.clock.set(Date.parse('2026-11-01T10:00:10Z'));
    const { key, userId } = await gw.fundedKey({ balance: '1.00', rateLimit: 3 });
    const unlimited = await gw.fundedKey({ userId });
    for (let i = 0; i < 2; i += 1) assert.equal((await chat(gw, key)).status, 200);
    const count = await fetch(`${gw.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'count me' }] }),
    });
    assert.equal(count.status, 200, 'count_tokens is served and counted');
    const balanceBefore = await gw.balance({ userId });
    const limited = await chat(gw, key);
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '50');
    const body = (await limited.json()) as { error: { type: string; code: string | null } };
    assert.equal(body.error.type, 'rate_limit_error');
    assert.equal(body.error.code, 'rate_limit_exceeded');
    const limitedMessages = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(limitedMessages.status, 429);
    assert.deepEqual(((await limitedMessages.json()) as { type: string; error: { type: string } }).error.type, 'rate_limit_error');
    assert.equal(await gw.balance({ userId }), balanceBefore, 'refused calls cost nothing');
    assert.equal((await chat(gw, unlimited.key)).status, 200, 'other keys of the user are not limited');
    gw.clock.advance(60_000);
    assert.equal((await chat(gw, key)).status, 200, 'a new minute starts a new count');
  } finally {
    await gw.close();
  }
});

test('with Redis, two gateway processes share one count', async () => {
  const simulator = await startSimulator();
  const schema = uniqueSchema();
  const prefix = `tg_rl_${randomBytes(4).toString('hex')}:`;
  const database = { url: `${POSTGRES_URL}?schema=${schema}` };
  const first = await startTestGateway({ database, simulator, redis: true, redisRateLimits: true, redisPrefix: prefix });
  const second = await startTestGateway({ database, simulator, redis: true, redisRateLimits: true, redisPrefix: prefix });
  try {
    second.clock.set(first.clock.now());
    const { key } = await first.fundedKey({ balance: '1.00', rateLimit: 4 });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await chat(i % 2 === 0 ? first : second, key)).status);
    assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  } finally {
    await first.close();
    await second.close();
    await simulator.close();
    await dropPostgresSchema(POSTGRES_URL, schema);
  }
});
