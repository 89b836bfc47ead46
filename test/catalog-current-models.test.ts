import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countTokens, replyText } from '../simulator/server.ts';
import { balanceMicros, expectedCost, openAiClient, waitFor } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { anthropicClient } from './helpers/messages-e2e.ts';

// The ids the coding clients send by default must be in the shipped catalog, or a new user's first call is a 404:
// Claude Code asks for claude-opus-4-8 (and claude-haiku-4-5-20251001 for background tasks), the Codex CLI 0.169.0
// for gpt-6.1-sol (its models list, highest priority; checked by running `codex exec` against the simulator).
describe('the default catalog serves the coding clients’ default models', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '20.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  for (const model of ['claude-opus-4-8', 'claude-sonnet-4-6', 'claude-haiku-4-5-20251001']) {
    test(`/v1/messages answers ${model}`, async () => {
      const message = await anthropicClient(gw, key).messages.create({ model, max_tokens: 256, messages: [{ role: 'user', content: 'Hello there' }] });
      assert.equal(message.model, model);
      assert.deepEqual(message.content, [{ type: 'text', text: replyText('Hello there', 16) }]);
    });
  }

  test('/v1/chat/completions answers the Codex default gpt-6.1-sol, charged at its catalog price', async () => {
    const before = await balanceMicros(gw, { userId });
    const completion = await openAiClient(gw, key).chat.completions.create({ model: 'gpt-6.1-sol', messages: [{ role: 'user', content: 'Hello there' }] });
    assert.equal(completion.choices[0]?.message.content, replyText('Hello there', 16));
    const cost = expectedCost('gpt-6.1-sol', { prompt_tokens: countTokens('Hello there'), completion_tokens: 16 });
    assert.ok(cost.total > 0n);
    await waitFor(async () => ((await balanceMicros(gw, { userId })) === before - cost.total ? true : undefined), 'the charge at the catalog price');
  });
});
