import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestGateway } from './helpers/gateway.ts';

/**
 * DESIGN §8: once caches are warm, the request path touches no database — keys, allowed lists and the catalog come from
 * memory, balances from the balance book, and charges are written later in batches. Counted, not timed.
 */
test('warm requests run no database query; their charges are written later in one batch', async () => {
  const gw = await startTestGateway({ config: { ledgerFlushMs: 60_000, requestLogFlushMs: 60_000 } });
  try {
    const { key, userId } = await gw.fundedKey({ balance: '5.00' });
    const limited = await gw.fundedKey({ userId, allowedModels: ['gpt-4o-mini'] });
    const call = (apiKey: string, stream = false) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', stream, messages: [{ role: 'user', content: 'warm path' }] }),
      }).then(async (response) => {
        assert.equal(response.status, 200);
        await response.text();
      });
    await call(key);
    await call(limited.key);
    await gw.app.services.book.flush();
    gw.queries.length = 0;
    for (let i = 0; i < 10; i += 1) await call(i % 2 === 0 ? key : limited.key, i % 3 === 0);
    const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: key } });
    assert.equal(models.status, 200);
    assert.deepEqual(gw.queries, [], `the request path ran queries: ${gw.queries.join(' | ')}`);
    // The batch itself runs prepared statements on SQLite (not counted above): what shows it is where the charges are.
    // Read from the table itself: the admin API's ledger listing writes what is queued first.
    const charges = async (): Promise<number> =>
      (await gw.storage.db.selectFrom('ledger').select('id').where('account_id', '=', userId).where('kind', '=', 'charge').execute()).length;
    assert.equal(gw.app.services.book.health().queued, 10, 'the 10 charges wait in memory');
    assert.equal(await charges(), 2, 'only the two warm-up charges are in the ledger yet');
    await gw.app.services.book.flush();
    assert.equal(gw.app.services.book.health().queued, 0, 'one flush took the whole queue');
    assert.equal(await charges(), 12, 'and wrote all 10 charges');
    assert.equal((await gw.admin('GET', `/ledger?userId=${userId}`)).body.data instanceof Array, true);
  } finally {
    await gw.close();
  }
});

test('an unknown key is looked up once, then answered from memory', async () => {
  const gw = await startTestGateway();
  try {
    const bad = 'tg-not-a-real-key-000000000000000000000000';
    const attempt = () => fetch(`${gw.url}/v1/models`, { headers: { authorization: bad } });
    assert.equal((await attempt()).status, 401);
    gw.queries.length = 0;
    for (let i = 0; i < 5; i += 1) assert.equal((await attempt()).status, 401);
    assert.deepEqual(gw.queries, []);
  } finally {
    await gw.close();
  }
});
