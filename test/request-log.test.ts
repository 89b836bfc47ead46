import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA, ledger, userWithOrg } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn } from './helpers/management.ts';

type Row = { id: string; keyId: string; endpoint: string; model: string | null; status: number; stream: boolean; error_type: string | null; cost: string; input_tokens: number; output_tokens: number; ttft_ms: number | null };
type UsageRow = { day?: string; model?: string | null; keyId?: string; endpoint?: string; requests: number; errors: number; cost: string };
type List<T> = { object: string; data: T[]; next_cursor: string | null };

const DAY = '2026-11-01';
const sum = (values: readonly string[]): bigint => values.reduce((total, value) => total + micros(value), 0n);

/** DESIGN §10 request log, /usage and /ledger: after a mixed run the three agree exactly. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`request log, usage and ledger (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const settle = async (): Promise<void> => {
      await gw.app.services.requestLog.idle();
      await gw.app.services.book.flush();
      await gw.app.services.requestLog.flush();
    };
    const chat = (key: string, body: Record<string, unknown>, signal?: AbortSignal) =>
      fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
    const messages = (key: string, body: Record<string, unknown>) =>
      fetch(`${gw.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' }, body: JSON.stringify(body) });

    test('after a mixed run the request log, /usage (each groupBy) and the ledger agree to the unit; billed answers carry x-tollgate-cost', async () => {
      const customer = await createCustomer(gw, { balance: '5.00' });
      const key = (await gw.admin<{ key: string; id: string }>('POST', '/keys', { userId: customer.userId })).body;
      const hello = [{ role: 'user', content: 'Hello there, how are you?' }];

      const plain = await chat(key.key, { model: 'gpt-4.1', messages: hello });
      assert.equal(plain.status, 200);
      const header = plain.headers.get('x-tollgate-cost');
      assert.ok(header && micros(header) > 0n, 'a billed chat completion says what it cost');
      await plain.text();
      assert.equal((await (await chat(key.key, { model: 'gpt-4.1', messages: hello, stream: true })).text()).includes('[DONE]'), true);
      const claude = await messages(key.key, { model: 'claude-haiku-4-5', max_tokens: 50, messages: hello });
      assert.equal(claude.status, 200);
      assert.ok(micros(claude.headers.get('x-tollgate-cost') ?? '0') > 0n, 'the vendor-shaped messages answer carries its cost in a header');
      await claude.text();
      await (await messages(key.key, { model: 'claude-haiku-4-5', max_tokens: 50, messages: hello, stream: true })).text();
      gw.simulator.addFault({ status: 500, match: { path: '/v1/chat/completions' } });
      const failed = await chat(key.key, { model: 'gpt-4.1', messages: hello });
      assert.ok(failed.status >= 500);
      assert.equal(failed.headers.get('x-tollgate-cost'), null, 'a failure is not billed');
      await failed.text();
      assert.equal((await gw.admin('PATCH', '/models/gpt-4o', { deprecated_at: '2026-01-01T00:00:00Z', deprecation_redirect_to: 'gpt-4.1' })).status, 200);
      await (await chat(key.key, { model: 'gpt-4o', messages: hello })).text();
      const abort = new AbortController();
      const cut = await chat(key.key, { model: 'gpt-4.1', messages: hello, stream: true, max_tokens: 400 }, abort.signal);
      await cut.body!.getReader().read();
      abort.abort();
      const poor = await createCustomer(gw, { balance: '0.00' });
      const poorKey = (await gw.admin<{ key: string }>('POST', '/keys', { userId: poor.userId })).body.key;
      assert.equal((await chat(poorKey, { model: 'gpt-4.1', messages: hello })).status, 402);
      await settle();

      const client = await signIn(gw, customer);
      const rows = (await client.call<List<Row>>('GET', '/requests?limit=100')).body.data;
      assert.equal(rows.length, 7, 'one row per request, failures included');
      const ledgerRows = await ledger(gw, { userId: customer.userId });
      const charged = ledgerRows.filter((row) => row.kind === 'charge');
      assert.equal(sum(rows.map((row) => row.cost)), -sum(charged.map((row) => String(row.amount))), 'the log costs what the ledger charged');
      for (const row of rows) {
        const own = charged.filter((entry) => entry.requestId === row.id);
        assert.equal(micros(row.cost), -sum(own.map((entry) => String(entry.amount))), `row ${row.endpoint} ${row.status} costs its ledger charges`);
      }
      const vendorFailure = rows.find((row) => row.status >= 500);
      assert.ok(vendorFailure?.error_type && vendorFailure.cost === '0.00', 'a failed request is logged at cost 0');
      assert.ok(rows.some((row) => row.stream && row.ttft_ms !== null), 'streams record their first frame');
      assert.ok(rows.some((row) => row.model === 'gpt-4o' && micros(row.cost) > 0n), 'a redirect is logged under the model asked for');
      assert.equal(rows.filter((row) => row.endpoint === 'messages').length, 2);

      const total = micros((await gw.balance({ userId: customer.userId }))) - micros('5.00');
      for (const groupBy of ['', 'day', 'model', 'key', 'endpoint', 'day,model,key,endpoint']) {
        const usage = await client.call<List<UsageRow>>('GET', `/usage?from=${DAY}&to=${DAY}${groupBy ? `&groupBy=${groupBy}` : ''}`);
        assert.equal(usage.status, 200, groupBy);
        assert.equal(-sum(usage.body.data.map((row) => row.cost)), total, `usage by [${groupBy}] sums to the ledger`);
        assert.equal(usage.body.data.reduce((count, row) => count + row.requests, 0), 7);
      }
      const byEndpoint = (await client.call<List<UsageRow>>('GET', `/usage?from=${DAY}&to=${DAY}&groupBy=endpoint`)).body.data;
      assert.deepEqual(byEndpoint.map((row) => row.endpoint).sort(), ['chat.completions', 'messages']);
      assert.ok(byEndpoint.find((row) => row.endpoint === 'chat.completions')!.errors >= 1);

      const entries = await client.call<List<{ amount: string; balanceAfter: string; requestId: string | null }>>('GET', '/ledger?limit=100');
      assert.equal(entries.status, 200);
      assert.equal(entries.body.data[0]!.balanceAfter, await gw.balance({ userId: customer.userId }), 'the newest entry ends at the balance');
      const poorRows = (await apiClient(gw, (await managementKey(gw, poor.userId)).key)('GET', '/requests')).body as List<Row>;
      assert.deepEqual(poorRows.data.map((row) => [row.status, row.error_type, row.cost]), [[402, 'insufficient_balance_error', '0.00']]);
    });

    test('cursors page newest first; filters by key, model and status; another user sees none of it; 400 for bad input', async () => {
      const customer = await createCustomer(gw);
      const first = (await gw.admin<{ key: string; id: string }>('POST', '/keys', { userId: customer.userId })).body;
      const second = (await gw.admin<{ key: string; id: string }>('POST', '/keys', { userId: customer.userId })).body;
      const hello = [{ role: 'user', content: 'Hi' }];
      for (let index = 0; index < 3; index += 1) await (await chat(first.key, { model: 'gpt-4.1-nano', messages: hello })).text();
      await (await chat(second.key, { model: 'gpt-4.1-mini', messages: hello })).text();
      await settle();
      const client = await signIn(gw, customer);
      const page1 = (await client.call<List<Row>>('GET', '/requests?limit=3')).body;
      assert.equal(page1.data.length, 3);
      assert.ok(page1.next_cursor);
      const page2 = (await client.call<List<Row>>('GET', `/requests?limit=3&cursor=${page1.next_cursor}`)).body;
      assert.equal(page2.data.length, 1);
      assert.equal(new Set([...page1.data, ...page2.data].map((row) => row.id)).size, 4, 'no row twice, none missing');
      assert.equal(page1.data[0]!.model, 'gpt-4.1-mini', 'newest first');
      assert.equal((await client.call<List<Row>>('GET', `/requests?keyId=${first.id}`)).body.data.length, 3);
      assert.equal((await client.call<List<Row>>('GET', '/requests?model=gpt-4.1-mini')).body.data.length, 1);
      assert.equal((await client.call<List<Row>>('GET', '/requests?status=404')).body.data.length, 0);
      assert.equal((await client.call<List<Row>>('GET', '/requests?to=2026-10-31')).body.data.length, 0);

      const stranger = await signIn(gw, await createCustomer(gw));
      assert.deepEqual((await stranger.call<List<Row>>('GET', '/requests')).body.data, []);
      assert.deepEqual((await stranger.call<List<UsageRow>>('GET', `/usage?from=${DAY}&to=${DAY}`)).body.data, []);
      for (const bad of ['/requests?limit=101', '/requests?cursor=nonsense', '/requests?from=yesterday', `/usage?from=${DAY}`, `/usage?from=${DAY}&to=2026-10-01`, `/usage?from=${DAY}&to=${DAY}&groupBy=colour`, '/ledger?limit=0']) {
        const answer = await client.call('GET', bad);
        assert.equal(answer.status, 400, bad);
        assert.equal(errorA(answer.body).type, 'invalid_request_error');
      }
      const inference = await apiClient(gw, first.key)('GET', '/requests');
      assert.equal(inference.status, 403, 'an inference key cannot read the management API');
      const management = await managementKey(gw, customer.userId);
      assert.equal((await chat(management.key, { model: 'gpt-4.1', messages: hello })).status, 403, 'a management key cannot call models');
    });

    test("an org's owner sees the org's requests and ledger; a member only their own requests and no ledger; another org answers 404", async () => {
      const { userId: ownerId, orgId } = await userWithOrg(gw, { user: '1.00', org: '5.00' });
      const member = await createCustomer(gw);
      assert.equal((await gw.admin('POST', `/orgs/${orgId}/members`, { userId: member.userId, role: 'member' })).status, 200);
      const ownerKey = (await gw.admin<{ key: string }>('POST', '/keys', { userId: ownerId, orgId })).body.key;
      const memberKey = (await gw.admin<{ key: string }>('POST', '/keys', { userId: member.userId, orgId })).body.key;
      const hello = [{ role: 'user', content: 'Hi' }];
      await (await chat(ownerKey, { model: 'gpt-4.1-nano', messages: hello })).text();
      await (await chat(memberKey, { model: 'gpt-4.1-nano', messages: hello })).text();
      await settle();
      const owner = await managementKey(gw, ownerId);
      assert.equal(((await owner.call<List<Row>>('GET', `/requests?orgId=${orgId}`)).body).data.length, 2);
      assert.equal((await owner.call<List<UsageRow>>('GET', `/usage?orgId=${orgId}&from=${DAY}&to=${DAY}`)).body.data[0]!.requests, 2);
      assert.equal((await owner.call('GET', `/ledger?orgId=${orgId}`)).status, 200);
      const memberClient = await signIn(gw, member);
      assert.equal((await memberClient.call<List<Row>>('GET', `/requests?orgId=${orgId}`)).body.data.length, 1, 'a member sees their own requests in the org');
      const ledgerAnswer = await memberClient.call('GET', `/ledger?orgId=${orgId}`);
      assert.equal(ledgerAnswer.status, 403);
      assert.equal(errorA(ledgerAnswer.body).type, 'permission_error');
      const outsider = await signIn(gw, await createCustomer(gw));
      assert.equal((await outsider.call('GET', `/requests?orgId=${orgId}`)).status, 404);
      assert.equal((await outsider.call('GET', `/usage?orgId=${orgId}&from=${DAY}&to=${DAY}`)).status, 404);

      const adminView = await gw.admin<List<Row>>('GET', `/requests?orgId=${orgId}`);
      assert.equal(adminView.body.data.length, 2);
      const adminUsage = await gw.admin<List<UsageRow>>('GET', `/usage?userId=${member.userId}&from=${DAY}&to=${DAY}&groupBy=key`);
      assert.equal(adminUsage.body.data.length, 1);
      assert.equal((await fetch(`${gw.url}/admin/v1/requests`)).status, 401);
    });
  });
}
