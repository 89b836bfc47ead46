import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { charges, ledger } from './helpers/e2e.ts';

const CHUNKS = 200;

/** Revoking a key cuts its open streams at once; what was produced is charged once. */
describe('a revoked key\'s open streams', () => {
  let simulator: Simulator;
  let gw: TestGateway;
  before(async () => {
    simulator = await startSimulator({ chunkDelayMs: 50, streamChunks: CHUNKS, replyTokens: CHUNKS * 2 });
    gw = await startTestGateway({ simulator });
  });
  after(async () => {
    await gw?.close();
    await simulator?.close();
  });

  for (const [path, body] of [
    ['/v1/chat/completions', { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'tell a long story' }] }],
    ['/v1/messages', { model: 'claude-sonnet-4-5', stream: true, max_tokens: 4000, messages: [{ role: 'user', content: 'tell a long story' }] }],
  ] as const) {
    test(`${path}: the stream ends once the key is revoked, and is charged once`, async () => {
      const { key, keyId, userId } = await gw.fundedKey({ balance: '5.00' });
      const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = decoder.decode((await reader.read()).value);
      while (!text.includes('data:')) text += decoder.decode((await reader.read()).value);
      assert.equal((await gw.admin('DELETE', `/keys/${keyId}`)).status, 200);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += decoder.decode(value);
      }
      const frames = text.split('\n\n').filter((frame) => frame.includes('data:')).length;
      assert.ok(frames < CHUNKS / 2, `the stream was cut early (${frames} frames of about ${CHUNKS})`);
      assert.match(text, /revoked/, 'the last frame says why');

      const rows = await ledger(gw, { userId });
      assert.equal(charges(rows).length, 1, 'one charge for what was produced');
      const sum = rows.reduce((total, row) => total + micros(row.amount), 0n);
      assert.equal(micros(await gw.balance({ userId })), sum, 'balance = Σ ledger');
      assert.ok(micros(await gw.balance({ userId })) < micros('5.00'), 'what was produced was charged');
    });
  }
});
