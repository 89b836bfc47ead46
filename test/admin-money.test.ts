import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA, ledger } from './helpers/e2e.ts';

/** Money entering through the admin API: bounded amounts (issue 11.3) and idempotent top-ups (11.7, DESIGN §4). */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`admin money (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const credit = async (body: unknown, idempotencyKey?: string) => {
      const response = await fetch(`${gw.url}/admin/v1/balance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    test('amounts beyond ±1,000,000,000 are refused with 400 wherever money enters, and the ledger keeps writing', async () => {
      const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'bounded', balance: '1.00' });
      for (const amount of ['1000000000.000000001', '-1000000000.5', '999999999999', 99999999999999]) {
        const refused = await credit({ userId: user.body.id, amount });
        assert.equal(refused.status, 400, `credit of ${amount}`);
        assert.match(errorA(refused.body).message, /1000000000/);
      }
      assert.equal((await gw.admin('POST', '/users', { name: 'rich', balance: '2000000000' })).status, 400);
      const model = await gw.admin('PATCH', '/models/gpt-4o', { cost_context: '5000000000' });
      assert.equal(model.status, 400, 'a price beyond the bound is refused too');

      // The largest allowed credits, repeated: the balance may not be taken beyond what its column holds.
      for (let index = 0; index < 8; index += 1) assert.equal((await credit({ userId: user.body.id, amount: '1000000000' })).status, 200);
      const over = await credit({ userId: user.body.id, amount: '1000000000' });
      assert.equal(over.status, 400);
      assert.equal(await gw.balance({ userId: user.body.id }), '8000000001.00');
      const rows = await ledger(gw, { userId: user.body.id });
      assert.equal(rows.length, 9, 'initial balance and eight credits; nothing refused was written');

      // Charges still go through after the refusals (a poisoned batch would stop every later write).
      const { key, userId } = await gw.fundedKey({ balance: '1.00' });
      const chat = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'still billing?' }] }),
      });
      assert.equal(chat.status, 200);
      await gw.app.services.book.flush();
      assert.equal((await ledger(gw, { userId })).filter((row) => row.kind === 'charge').length, 1);
    });

    test('Idempotency-Key: the same key and body credit once and answer the first result; another body is 409', async () => {
      const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'top-up', balance: '0' });
      const body = { userId: user.body.id, amount: '12.50', note: 'invoice 1042' };
      const first = await credit(body, 'topup-1042');
      assert.equal(first.status, 200);
      assert.equal(first.body.balance, '12.50');
      // A credit without the key in between: the repeat must still answer the first result, not the balance now.
      assert.equal((await credit({ userId: user.body.id, amount: '1.00' })).status, 200);
      const repeated = await Promise.all([credit(body, 'topup-1042'), credit(body, 'topup-1042'), credit(body, 'topup-1042')]);
      for (const response of repeated) assert.deepEqual(response, { status: 200, body: { balance: '12.50' } });
      const conflict = await credit({ ...body, amount: '99.00' }, 'topup-1042');
      assert.equal(conflict.status, 409);
      assert.equal(errorA(conflict.body).type, 'invalid_request_error');
      assert.equal(await gw.balance({ userId: user.body.id }), '13.50');
      const rows = await ledger(gw, { userId: user.body.id });
      assert.equal(rows.filter((row) => row.description === 'invoice 1042').length, 1, 'one ledger entry for the key, with its note');
    });

    test('concurrent first uses of one Idempotency-Key move money once', async () => {
      const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'race', balance: '0' });
      const body = { userId: user.body.id, amount: '3.00' };
      const answers = await Promise.all(Array.from({ length: 6 }, () => credit(body, 'race-key')));
      for (const answer of answers) assert.equal(answer.status, 200);
      assert.equal(await gw.balance({ userId: user.body.id }), '3.00');
      assert.equal((await ledger(gw, { userId: user.body.id })).length, 1);
    });
  });
}
