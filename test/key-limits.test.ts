import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startSimulator } from '../simulator/server.ts';
import { dropPostgresSchema } from '../src/storage/database.ts';
import { POSTGRES_URL, startTestGateway, uniqueSchema, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { createCustomer, signIn, type SignedInClient } from './helpers/management.ts';

const chat = (gw: TestGateway, key: string, marker: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: `limits ${marker}` }] }),
  });

const vendorCalls = (gw: TestGateway, marker: string): number => gw.simulator.requests.filter((request) => request.body.includes(`limits ${marker}`)).length;

interface KeyView {
  id: string;
  key: string;
  spent: string;
  remaining: string | null;
}

async function keyOf(gw: TestGateway, fields: Record<string, unknown>): Promise<{ client: SignedInClient; userId: string; key: KeyView }> {
  const customer = await createCustomer(gw, { balance: '5.00' });
  const client = await signIn(gw, customer);
  const created = await client.call<KeyView>('POST', '/keys', { name: 'limited', ...fields });
  if (created.status !== 200) throw new Error(`creating a key failed: ${JSON.stringify(created.body)}`);
  return { client, userId: customer.userId, key: created.body };
}

/** DESIGN §10 "Key limits", enforced on the model endpoints before the vendor is called. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`key limits (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    test('a key over its daily limit gets 402 key_limit_exceeded before the vendor is called, uncharged; the next UTC day it works again', async () => {
      gw.clock.set(Date.parse('2026-11-02T22:00:00Z'));
      const marker = randomBytes(4).toString('hex');
      const { userId, key } = await keyOf(gw, { limit: { amount: '0.000001', period: 'day' } });
      assert.equal((await chat(gw, key.key, marker)).status, 200, 'nothing spent yet');
      const balance = await gw.balance({ userId });
      const callsBefore = vendorCalls(gw, marker);

      const refused = await chat(gw, key.key, marker);
      assert.equal(refused.status, 402);
      const error = errorA(await refused.json());
      assert.deepEqual({ type: error.type, code: error.code }, { type: 'insufficient_balance_error', code: 'key_limit_exceeded' });
      const messages = await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key.key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: `limits ${marker}` }] }),
      });
      assert.equal(messages.status, 402);
      assert.equal(((await messages.json()) as { error: { type: string } }).error.type, 'billing_error');
      assert.equal(vendorCalls(gw, marker), callsBefore, 'the vendor was not called');
      assert.equal(await gw.balance({ userId }), balance, 'refused calls are not charged');

      const self = await fetch(`${gw.url}/api/v1/key`, { headers: { authorization: `Bearer ${key.key}` } });
      const view = (await self.json()) as KeyView;
      assert.ok(Number(view.spent) >= 0.000001);
      assert.equal(view.remaining, '0.00');

      gw.clock.set(Date.parse('2026-11-03T00:00:00Z'));
      assert.equal((await chat(gw, key.key, marker)).status, 200, 'a new UTC day, a new limit');
    });

    test('a weekly limit counts from Monday (UTC), and a key without a limit is never refused for spending', async () => {
      gw.clock.set(Date.parse('2026-11-04T12:00:00Z')); // a Wednesday
      const marker = randomBytes(4).toString('hex');
      const { key } = await keyOf(gw, { limit: { amount: '0.000001', period: 'week' } });
      const free = await keyOf(gw, {});
      assert.equal((await chat(gw, key.key, marker)).status, 200);
      gw.clock.set(Date.parse('2026-11-08T23:59:00Z')); // Sunday: the same ISO week
      assert.equal((await chat(gw, key.key, marker)).status, 402);
      for (let i = 0; i < 2; i += 1) assert.equal((await chat(gw, free.key.key, marker)).status, 200);
      gw.clock.set(Date.parse('2026-11-09T00:00:00Z')); // Monday
      assert.equal((await chat(gw, key.key, marker)).status, 200);
    });

    test('an expired key is refused (401); a disabled key too, until enabled again', async () => {
      const marker = randomBytes(4).toString('hex');
      const expiresAt = new Date(gw.clock.now() + 3_600_000).toISOString();
      const { client, key } = await keyOf(gw, { expiresAt });
      assert.equal((await chat(gw, key.key, marker)).status, 200);
      assert.equal((await client.call('PATCH', `/keys/${key.id}`, { disabled: true })).status, 200);
      const disabled = await chat(gw, key.key, marker);
      assert.equal(disabled.status, 401);
      assert.equal(errorA(await disabled.json()).type, 'unauthorized_request_error');
      assert.equal((await client.call('PATCH', `/keys/${key.id}`, { disabled: false })).status, 200);
      assert.equal((await chat(gw, key.key, marker)).status, 200, 'enabled again');
      gw.clock.advance(3_600_000);
      assert.equal((await chat(gw, key.key, marker)).status, 401, 'expired');
    });

    test('rpm set by the owner → 429 with retry-after, not charged; a new minute resets it', async () => {
      gw.clock.set(Date.parse('2026-11-10T10:00:15Z'));
      const marker = randomBytes(4).toString('hex');
      const { client, userId, key } = await keyOf(gw, {});
      assert.equal((await client.call('PATCH', `/keys/${key.id}`, { rpm: 2 })).status, 200);
      for (let i = 0; i < 2; i += 1) assert.equal((await chat(gw, key.key, marker)).status, 200);
      const balance = await gw.balance({ userId });
      const limited = await chat(gw, key.key, marker);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '45');
      assert.equal(errorA(await limited.json()).code, 'rate_limit_exceeded');
      assert.equal(vendorCalls(gw, marker), 2);
      assert.equal(await gw.balance({ userId }), balance);
      gw.clock.advance(60_000);
      assert.equal((await chat(gw, key.key, marker)).status, 200);
    });

    test('tpm counts the tokens of finished calls: once the minute\'s budget is used, 429 with retry-after until the next minute', async () => {
      gw.clock.set(Date.parse('2026-11-10T11:00:30Z'));
      const marker = randomBytes(4).toString('hex');
      const { key } = await keyOf(gw, { tpm: 5 });
      assert.equal((await chat(gw, key.key, marker)).status, 200, 'the first call of the minute runs, whatever its size');
      const limited = await chat(gw, key.key, marker);
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '30');
      assert.match(errorA(await limited.json()).message, /tokens per minute/);
      assert.equal(vendorCalls(gw, marker), 1);
      gw.clock.advance(30_000);
      assert.equal((await chat(gw, key.key, marker)).status, 200);
    });
  });
}

describe('key limits shared by two gateway nodes (PostgreSQL and Redis)', () => {
  const schema = uniqueSchema();
  const prefix = `tg_kl_${randomBytes(4).toString('hex')}:`;
  let first: TestGateway;
  let second: TestGateway;
  let simulator: Awaited<ReturnType<typeof startSimulator>>;

  before(async () => {
    simulator = await startSimulator();
    const database = { url: `${POSTGRES_URL}?schema=${schema}` };
    first = await startTestGateway({ database, simulator, redis: true, redisRateLimits: true, redisPrefix: prefix });
    second = await startTestGateway({ database, simulator, redis: true, redisRateLimits: true, redisPrefix: prefix });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await simulator?.close();
    await dropPostgresSchema(POSTGRES_URL, schema);
  });

  test('rpm and tpm are counted in Redis, so both nodes share them', async () => {
    first.clock.set(Date.parse('2026-11-10T12:00:00Z'));
    second.clock.set(first.clock.now());
    const marker = randomBytes(4).toString('hex');
    const { key } = await keyOf(first, { rpm: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i += 1) statuses.push((await chat(i % 2 === 0 ? first : second, key.key, marker)).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);

    const tokens = await keyOf(first, { tpm: 5 });
    assert.equal((await chat(first, tokens.key.key, marker)).status, 200);
    assert.equal((await chat(second, tokens.key.key, marker)).status, 429, 'the other node sees the tokens used on the first');
  });

  test("a node that never served the key reads its period's spend from the ledger", async () => {
    first.clock.set(Date.parse('2026-11-11T09:00:00Z'));
    second.clock.set(first.clock.now());
    const marker = randomBytes(4).toString('hex');
    const { key } = await keyOf(first, { limit: { amount: '0.000001', period: 'day' } });
    assert.equal((await chat(first, key.key, marker)).status, 200);
    await first.app.services.book.flush();
    assert.equal((await chat(second, key.key, marker)).status, 402);
  });
});
