import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asRecord, balanceMicros, charges, expectedCost, ledger, openAiClient } from './helpers/e2e.ts';

const MODEL = 'gpt-4.1';

interface Outcome {
  requestId: string;
  /** total_cost shown to the client, in micro-units. */
  cost: bigint;
}

/** One chat completion, streamed (with usage) or not; returns its request id and the total_cost the client saw. */
async function call(client: OpenAI, index: number, stream: boolean): Promise<Outcome> {
  const messages = [{ role: 'user' as const, content: `Concurrent call number ${index}` }];
  if (!stream) {
    const { data, response } = await client.chat.completions.create({ model: MODEL, messages }).withResponse();
    const usage = asRecord(data.usage);
    assert.equal(micros(Number(usage.total_cost)), expectedCost(MODEL, data.usage!).total);
    return { requestId: response.headers.get('x-request-id') ?? '', cost: micros(Number(usage.total_cost)) };
  }
  const { data, response } = await client.chat.completions
    .create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } })
    .withResponse();
  let cost: bigint | undefined;
  for await (const chunk of data) {
    if (chunk.usage) {
      cost = micros(Number(asRecord(chunk.usage).total_cost));
      assert.equal(cost, expectedCost(MODEL, chunk.usage).total);
    }
  }
  assert.ok(cost !== undefined, 'the stream ended with a usage chunk');
  return { requestId: response.headers.get('x-request-id') ?? '', cost };
}

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`billing under concurrency (${database})`, () => {
    let gw: TestGateway;

    before(async () => {
      gw = await startTestGateway({ database });
      gw.simulator.options.latencyMs = 5;
      gw.simulator.options.chunkDelayMs = 1;
    });
    after(async () => {
      await gw?.close();
    });

    test('50 concurrent calls on one key: the balance drops by exactly the sum of total_cost, 50 ledger charges', async () => {
      const { key, userId } = await gw.fundedKey({ balance: '25.00' });
      const client = openAiClient(gw, key);
      const initial = await balanceMicros(gw, { userId });
      assert.equal(initial, micros('25.00'));

      const outcomes = await Promise.all(Array.from({ length: 50 }, (_, index) => call(client, index, index % 2 === 1)));
      const spent = outcomes.reduce((sum, outcome) => sum + outcome.cost, 0n);
      assert.ok(spent > 0n);
      const final = await balanceMicros(gw, { userId });
      assert.equal(final, initial - spent, 'final = initial − Σ total_cost');

      const rows = await ledger(gw, { userId });
      const charged = charges(rows);
      assert.equal(charged.length, 50, 'one charge per call');
      const ledgerIds = new Set(charged.map((row) => row.requestId));
      assert.equal(ledgerIds.size, 50, 'request ids are distinct');
      assert.deepEqual([...ledgerIds].sort(), outcomes.map((outcome) => outcome.requestId).sort(), 'the ledger names exactly our requests');
      for (const outcome of outcomes) {
        const row = charged.find((entry) => entry.requestId === outcome.requestId);
        assert.equal(micros(row!.amount), -outcome.cost, `charge of ${outcome.requestId}`);
      }
      const chargedSum = charged.reduce((sum, row) => sum + micros(row.amount), 0n);
      assert.equal(chargedSum, final - initial, 'Σ ledger charges = final − initial');
      const ledgerSum = rows.reduce((sum, row) => sum + micros(row.amount), 0n);
      assert.equal(ledgerSum, final, 'the balance equals the sum of its ledger');
    });

    test('a small positive balance: in-flight calls may overdraw it by their own cost only, then 402', async () => {
      const { key, userId } = await gw.fundedKey({ balance: '0.000300' });
      const client = openAiClient(gw, key);
      const initial = await balanceMicros(gw, { userId });
      gw.simulator.options.latencyMs = 60;
      let settled: PromiseSettledResult<Outcome>[];
      try {
        settled = await Promise.allSettled(Array.from({ length: 8 }, (_, index) => call(client, 100 + index, index % 2 === 0)));
      } finally {
        gw.simulator.options.latencyMs = 5;
      }
      const succeeded = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      for (const result of settled) {
        if (result.status === 'rejected') {
          assert.ok(result.reason instanceof OpenAI.APIError && result.reason.status === 402, `only 402 may refuse a call: ${String(result.reason)}`);
        }
      }
      assert.ok(succeeded.length >= 1, 'the balance was positive, so calls were admitted');
      const spent = succeeded.reduce((sum, outcome) => sum + outcome.cost, 0n);
      assert.ok(spent > initial, 'the admitted calls cost more than the balance (the test needs an overdraft)');
      const final = await balanceMicros(gw, { userId });
      assert.equal(final, initial - spent, 'charged exactly the admitted calls');
      assert.ok(final < 0n, 'the balance went negative');
      assert.ok(-final < spent, 'overdraft is bounded by the calls that were in flight');
      assert.equal(charges(await ledger(gw, { userId })).length, succeeded.length, 'refused calls are not charged');

      const sent = gw.simulator.requests.length;
      const refused = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'one more' }] }).then(
        () => undefined,
        (error: unknown) => error,
      );
      assert.ok(refused instanceof OpenAI.APIError, 'the next call fails');
      assert.equal(refused.status, 402);
      assert.equal(refused.type, 'insufficient_balance_error');
      assert.equal(gw.simulator.requests.length, sent, 'the refused call never reached the vendor');
      assert.equal(await balanceMicros(gw, { userId }), final);
    });
  });
}
