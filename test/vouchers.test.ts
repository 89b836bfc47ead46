import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA, ledger } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn } from './helpers/management.ts';
import { jsonClient } from './helpers/json-client.ts';

interface VoucherView {
  id: string;
  codeStart: string;
  amount: string;
  note: string | null;
  state: string;
  redeemedBy: string | null;
  account: { type: string; id: string } | null;
}
interface Created {
  codes: string[];
  data: Array<VoucherView & { code: string }>;
}

/** DESIGN §4 (POST/GET/DELETE /admin/v1/vouchers) and §10 (POST /api/v1/vouchers/redeem): a code pays once. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`vouchers (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const makeCodes = async (body: Record<string, unknown>): Promise<Created> => {
      const created = await gw.admin<Created>('POST', '/vouchers', body);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body;
    };

    test('the operator makes codes, the customer redeems one (typed loosely) into their balance once, with a ledger note naming the voucher', async () => {
      const made = await makeCodes({ amount: '5.00', count: 3, note: 'spring promo' });
      assert.equal(made.codes.length, 3);
      assert.equal(new Set(made.codes).size, 3);
      for (const code of made.codes) assert.match(code, /^TGV(-[0-9A-HJKMNP-TV-Z]{4}){5}$/);
      const listed = await gw.admin<{ object: string; data: VoucherView[] }>('GET', '/vouchers?query=spring&limit=100');
      assert.equal(listed.body.object, 'list');
      assert.deepEqual(listed.body.data.map((voucher) => voucher.state), ['active', 'active', 'active']);
      assert.ok(!JSON.stringify(listed.body).includes(made.codes[0]!.slice(8)), 'lists never show a whole code');

      const customer = await createCustomer(gw, { balance: '10.00' });
      const client = await signIn(gw, customer);
      const loosely = made.codes[0]!.toLowerCase().replace(/-/g, ' ');
      const redeemed = await client.call<{ balance: string; amount: string }>('POST', '/vouchers/redeem', { code: loosely });
      assert.equal(redeemed.status, 200, JSON.stringify(redeemed.body));
      assert.deepEqual({ balance: redeemed.body.balance, amount: redeemed.body.amount }, { balance: '15.00', amount: '5.00' });
      const again = await client.call('POST', '/vouchers/redeem', { code: made.codes[0] });
      const unknown = await client.call('POST', '/vouchers/redeem', { code: 'TGV-0000-0000-0000-0000-0000' });
      assert.equal(again.status, 400);
      assert.equal(unknown.status, 400);
      assert.equal(errorA(again.body).message, errorA(unknown.body).message, 'a used code and an unknown one answer alike');
      assert.equal(await gw.balance({ userId: customer.userId }), '15.00');

      const rows = await ledger(gw, { userId: customer.userId });
      const voucherId = made.data[0]!.id;
      const credit = rows.find((row) => String(row.description).includes(voucherId));
      assert.ok(credit, 'the credit names the voucher');
      assert.equal(credit.amount, '5.00');
      assert.equal((credit as unknown as { note: string }).note, `voucher ${voucherId} (spring promo)`);
      const shown = await gw.admin<VoucherView>('GET', `/vouchers/${voucherId}`);
      assert.deepEqual({ state: shown.body.state, redeemedBy: shown.body.redeemedBy, account: shown.body.account }, { state: 'redeemed', redeemedBy: customer.userId, account: { type: 'user', id: customer.userId } });
    });

    test('ten parallel redemptions of one code credit exactly once', async () => {
      const { codes } = await makeCodes({ amount: '2.50' });
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      const answers = await Promise.all(Array.from({ length: 10 }, () => client.call('POST', '/vouchers/redeem', { code: codes[0] })));
      assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
      assert.equal(await gw.balance({ userId: customer.userId }), '2.50');
      assert.equal((await ledger(gw, { userId: customer.userId })).length, 1);
    });

    test('into an org: owner and admin may, a member gets 403, an outsider 404; a management key works, an inference key and a missing CSRF token do not', async () => {
      const owner = await createCustomer(gw, { balance: '0' });
      const member = await createCustomer(gw, { balance: '0' });
      const outsider = await createCustomer(gw, { balance: '0' });
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'acme', ownerId: owner.userId });
      assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.userId, role: 'member' })).status, 200);
      const { codes } = await makeCodes({ amount: '7.00', count: 2 });

      const asMember = await (await signIn(gw, member)).call('POST', '/vouchers/redeem', { code: codes[0], orgId: org.body.id });
      assert.equal(asMember.status, 403);
      assert.equal(errorA(asMember.body).type, 'permission_error');
      const asOutsider = await (await signIn(gw, outsider)).call('POST', '/vouchers/redeem', { code: codes[0], orgId: org.body.id });
      assert.equal(asOutsider.status, 404);
      const ownerClient = await signIn(gw, owner);
      assert.equal((await ownerClient.withoutCsrf('POST', '/vouchers/redeem', { code: codes[0], orgId: org.body.id })).status, 403);
      const { key: inferenceKey } = await gw.fundedKey({ userId: owner.userId });
      assert.equal((await apiClient(gw, inferenceKey)('POST', '/vouchers/redeem', { code: codes[0], orgId: org.body.id })).status, 403);
      assert.equal(await gw.balance({ orgId: org.body.id }), '0.00', 'none of the refused calls paid');

      const viaKey = await managementKey(gw, owner.userId);
      const paid = await viaKey.call<{ balance: string }>('POST', '/vouchers/redeem', { code: codes[0], orgId: org.body.id });
      assert.deepEqual({ status: paid.status, balance: paid.body.balance }, { status: 200, balance: '7.00' });
      assert.equal(await gw.balance({ orgId: org.body.id }), '7.00');
      assert.equal(await gw.balance({ userId: owner.userId }), '0.00');
      // The model endpoints refuse the management key (the redeem route is no back door to inference).
      const chat = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${viaKey.key}` } });
      assert.equal(chat.status, 403);
    });

    test('expired and voided codes do not pay; a redeemed one cannot be voided; unknown ids are 404', async () => {
      const expiring = await makeCodes({ amount: '1.00', expiresAt: new Date(gw.clock.now() + 3_600_000).toISOString() });
      const voided = await makeCodes({ amount: '1.00' });
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      const killed = await gw.admin<VoucherView>('DELETE', `/vouchers/${voided.data[0]!.id}`);
      assert.deepEqual({ status: killed.status, state: killed.body.state }, { status: 200, state: 'void' });
      assert.equal((await gw.admin('DELETE', `/vouchers/${voided.data[0]!.id}`)).status, 409);
      assert.equal((await client.call('POST', '/vouchers/redeem', { code: voided.codes[0] })).status, 400);

      gw.clock.advance(3_600_000);
      assert.equal((await gw.admin<VoucherView>('GET', `/vouchers/${expiring.data[0]!.id}`)).body.state, 'expired');
      assert.equal((await client.call('POST', '/vouchers/redeem', { code: expiring.codes[0] })).status, 400);
      assert.equal(await gw.balance({ userId: customer.userId }), '0.00');

      const fresh = await makeCodes({ amount: '1.00' });
      assert.equal((await client.call('POST', '/vouchers/redeem', { code: fresh.codes[0] })).status, 200);
      assert.equal((await gw.admin('DELETE', `/vouchers/${fresh.data[0]!.id}`)).status, 409);
      assert.equal((await gw.admin('DELETE', '/vouchers/vch_nope')).status, 404);
      assert.equal((await gw.admin('GET', '/vouchers/vch_nope')).status, 404);
    });

    test('ten failed redemptions in 15 minutes → 429 even for a good code, until the window passes', async () => {
      const { codes } = await makeCodes({ amount: '3.00' });
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      for (let attempt = 0; attempt < 10; attempt += 1) {
        assert.equal((await client.call('POST', '/vouchers/redeem', { code: `TGV-GUES-S000-0000-0000-000${attempt}` })).status, 400);
      }
      const throttled = await fetch(`${gw.url}/api/v1/vouchers/redeem`, {
        method: 'POST',
        headers: { cookie: client.cookie, 'x-csrf-token': client.csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ code: codes[0] }),
      });
      assert.equal(throttled.status, 429);
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
      const other = await signIn(gw, await createCustomer(gw, { balance: '0' }));
      assert.equal((await other.call('POST', '/vouchers/redeem', { code: 'TGV-0000-0000-0000-0000-0000' })).status, 400, 'another user is not throttled');
      gw.clock.advance(15 * 60_000 + 1);
      assert.equal((await client.call('POST', '/vouchers/redeem', { code: codes[0] })).status, 200);
    });

    test('admin: bad input is a 400 in shape A, no token is a 401, cursors walk the whole list once', async () => {
      for (const body of [{ amount: '0' }, { amount: '-1' }, { amount: '1.00', count: 1001 }, { amount: '1.00', count: 0 }, { amount: 'lots' }, { amount: '1', expiresAt: 'tomorrow' }, { amount: '1', expiresAt: new Date(gw.clock.now() - 1000).toISOString() }]) {
        const refused = await gw.admin('POST', '/vouchers', body);
        assert.equal(refused.status, 400, JSON.stringify(body));
        assert.equal(errorA(refused.body).type, 'invalid_request_error');
      }
      assert.equal((await gw.admin('GET', '/vouchers?cursor=not-a-cursor')).status, 400);
      assert.equal((await gw.admin('GET', '/vouchers?limit=0')).status, 400);
      assert.equal((await gw.admin('GET', '/vouchers?state=lost')).status, 400);
      assert.equal((await jsonClient(`${gw.url}/admin/v1`, 'wrong-token')('GET', '/vouchers')).status, 401);
      assert.equal((await fetch(`${gw.url}/admin/v1/vouchers`, { method: 'POST' })).status, 401);
      const customer = await signIn(gw, await createCustomer(gw));
      assert.equal((await customer.call('POST', '/vouchers/redeem', { code: 5 })).status, 400);
      assert.equal((await customer.call('POST', '/vouchers/redeem', {})).status, 400);

      const made = await makeCodes({ amount: '0.10', count: 5, note: 'walk-the-pages' });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const path: string = `/vouchers?query=WALK-THE&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
        const page: { status: number; body: { data: VoucherView[]; next_cursor: string | null } } = await gw.admin('GET', path);
        assert.equal(page.status, 200);
        assert.ok(page.body.data.length <= 2);
        seen.push(...page.body.data.map((voucher) => voucher.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual([...seen].sort(), made.data.map((voucher) => voucher.id).sort());
      assert.equal(new Set(seen).size, 5, 'each voucher once');
      const active = await gw.admin<{ data: VoucherView[] }>('GET', '/vouchers?state=redeemed&query=walk-the-pages');
      assert.equal(active.body.data.length, 0);
    });
  });
}

/** Two gateways on one database (as two processes are): racing redemptions of one code still credit once. */
for (const database of ['sqlite', 'postgres'] as const) {
  test(`two gateways redeeming one code at once credit it once (${database})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-vouchers-'));
    const first = await startTestGateway({ database: database === 'sqlite' ? { url: `sqlite:${join(dir, 'shared.db')}` } : 'postgres' });
    const second = await startTestGateway({ database: { url: first.databaseUrl }, simulator: first.simulator });
    try {
      const { body } = await first.admin<Created>('POST', '/vouchers', { amount: '4.00' });
      const customer = await createCustomer(first, { balance: '0' });
      const clients = [await signIn(first, customer), await signIn(second, customer)];
      const answers = await Promise.all(Array.from({ length: 10 }, (_, index) => clients[index % 2]!.call('POST', '/vouchers/redeem', { code: body.codes[0] })));
      assert.equal(answers.filter((answer) => answer.status === 200).length, 1);
      assert.equal(answers.filter((answer) => answer.status === 400).length, 9);
      assert.equal(await first.balance({ userId: customer.userId }), '4.00');
      assert.equal(await second.balance({ userId: customer.userId }), '4.00');
      assert.equal((await ledger(first, { userId: customer.userId })).length, 1);
    } finally {
      await second.close();
      await first.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
