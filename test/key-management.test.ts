import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn, type SignedInClient } from './helpers/management.ts';

interface KeyView {
  id: string;
  key?: string;
  name: string | null;
  userId: string;
  orgId: string | null;
  start: string;
  scope: string;
  limit: { amount: string; period: string } | null;
  rpm: number | null;
  tpm: number | null;
  expiresAt: string | null;
  disabled: boolean;
  createdAt: string;
  lastUsedAt: string | null;
  spent: string;
  remaining: string | null;
}
interface KeyList {
  object: string;
  data: KeyView[];
  next_cursor: string | null;
}

const chat = (gw: TestGateway, key: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'key management' }] }),
  });

/** DESIGN §10: keys managed by their owners through /api/v1/keys, and by the operator through /admin/v1/keys. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`keys managed by their owners (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const customerClient = async (): Promise<{ userId: string; client: SignedInClient }> => {
      const customer = await createCustomer(gw, { balance: '5.00' });
      return { userId: customer.userId, client: await signIn(gw, customer) };
    };

    test('create shows the key text once; list, get and edit show it without its secret; delete stops it at once', async () => {
      const { userId, client } = await customerClient();
      const expiresAt = new Date(gw.clock.now() + 30 * 86_400_000).toISOString();
      const created = await client.call<KeyView>('POST', '/keys', { name: 'laptop', limit: { amount: '2.50', period: 'month' }, rpm: 30, tpm: 10_000, expiresAt });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const key = created.body;
      assert.match(key.key ?? '', /^tg-[A-Za-z0-9]{40}$/);
      assert.equal(key.start, `${key.key!.slice(0, 7)}…`);
      assert.deepEqual(
        { name: key.name, userId: key.userId, orgId: key.orgId, scope: key.scope, limit: key.limit, rpm: key.rpm, tpm: key.tpm, expiresAt: key.expiresAt, spent: key.spent, remaining: key.remaining, lastUsedAt: key.lastUsedAt },
        { name: 'laptop', userId, orgId: null, scope: 'inference', limit: { amount: '2.50', period: 'month' }, rpm: 30, tpm: 10_000, expiresAt, spent: '0.00', remaining: '2.50', lastUsedAt: null },
      );

      assert.equal((await chat(gw, key.key!)).status, 200);
      const listed = await client.call<KeyList>('GET', '/keys');
      assert.equal(listed.status, 200);
      assert.equal(listed.body.object, 'list');
      assert.deepEqual(listed.body.data.map((row) => row.id), [key.id]);
      const row = listed.body.data[0]!;
      assert.equal(row.key, undefined, 'the key text is shown only on creation');
      assert.equal(row.lastUsedAt, new Date(gw.clock.now()).toISOString(), 'the call was noted');
      assert.ok(Number(row.spent) > 0, 'the call was charged to the key');
      assert.equal(Number(row.remaining), 2.5 - Number(row.spent));

      const edited = await client.call<KeyView>('PATCH', `/keys/${key.id}`, { name: 'old laptop', rpm: null, limit: null });
      assert.equal(edited.status, 200);
      assert.deepEqual({ name: edited.body.name, rpm: edited.body.rpm, limit: edited.body.limit, remaining: edited.body.remaining, tpm: edited.body.tpm }, { name: 'old laptop', rpm: null, limit: null, remaining: null, tpm: 10_000 });
      assert.equal((await client.call<KeyView>('GET', `/keys/${key.id}`)).body.name, 'old laptop');

      const deleted = await client.call('DELETE', `/keys/${key.id}`);
      assert.equal(deleted.status, 200);
      assert.equal((await chat(gw, key.key!)).status, 401, 'a deleted key stops at once');
      assert.deepEqual((await client.call<KeyList>('GET', '/keys')).body.data, []);
      assert.equal((await client.call('GET', `/keys/${key.id}`)).status, 404);
      assert.equal((await client.call('DELETE', `/keys/${key.id}`)).status, 404);

      const trail = await gw.app.services.audit.list({ targetId: key.id, limit: 10 });
      assert.deepEqual(trail.entries.map((entry) => [entry.action, entry.actor.type, entry.actor.id]).reverse(), [
        ['key.create', 'user', userId],
        ['key.update', 'user', userId],
        ['key.revoke', 'user', userId],
      ]);
      assert.ok(!JSON.stringify(trail.entries).includes(key.key!), 'the audit log never holds the key text');
    });

    test("another user's key answers 404 as if it did not exist", async () => {
      const owner = await customerClient();
      const other = await customerClient();
      const created = await owner.client.call<KeyView>('POST', '/keys', { name: 'mine' });
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'stolen' }], ['DELETE', undefined]] as const) {
        const response = await other.client.call(method, `/keys/${created.body.id}`, body);
        assert.equal(response.status, 404, method);
        assert.equal(errorA(response.body).type, 'invalid_request_error');
      }
      assert.deepEqual((await other.client.call<KeyList>('GET', '/keys')).body.data, []);
      assert.equal((await chat(gw, created.body.key!)).status, 200, 'the key still works');
    });

    test("an org's members create business keys; only owners and admins see and edit the others' (member → 403, outsider → 404)", async () => {
      const owner = await customerClient();
      const member = await customerClient();
      const otherMember = await customerClient();
      const outsider = await customerClient();
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: owner.userId, balance: '3.00' });
      for (const { userId } of [member, otherMember]) assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId, role: 'member' })).status, 200);

      const business = await member.client.call<KeyView>('POST', '/keys', { name: 'ci', orgId: org.body.id });
      assert.equal(business.status, 200);
      assert.deepEqual({ userId: business.body.userId, orgId: business.body.orgId }, { userId: member.userId, orgId: org.body.id });
      const ownerKey = await owner.client.call<KeyView>('POST', '/keys', { name: 'owner ci', orgId: org.body.id });

      const asOwner = await owner.client.call<KeyList>('GET', `/keys?orgId=${org.body.id}`);
      assert.deepEqual(new Set(asOwner.body.data.map((row) => row.id)), new Set([business.body.id, ownerKey.body.id]));
      const asMember = await otherMember.client.call<KeyList>('GET', `/keys?orgId=${org.body.id}`);
      assert.deepEqual(asMember.body.data, [], "a member lists only their own keys of the org");
      assert.equal((await outsider.client.call('GET', `/keys?orgId=${org.body.id}`)).status, 404);
      assert.equal((await outsider.client.call('POST', '/keys', { name: 'x', orgId: org.body.id })).status, 404);

      const refused = await otherMember.client.call('PATCH', `/keys/${business.body.id}`, { disabled: true });
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).type, 'permission_error');
      assert.equal((await otherMember.client.call('DELETE', `/keys/${business.body.id}`)).status, 403);
      assert.equal((await outsider.client.call('PATCH', `/keys/${business.body.id}`, { disabled: true })).status, 404);

      const disabled = await owner.client.call<KeyView>('PATCH', `/keys/${business.body.id}`, { disabled: true });
      assert.deepEqual({ status: disabled.status, disabled: disabled.body.disabled }, { status: 200, disabled: true });
      assert.equal((await chat(gw, business.body.key!)).status, 401, 'the owner disabled the member key');
      const trail = await gw.app.services.audit.list({ targetId: business.body.id, action: 'key.update', limit: 10 });
      assert.deepEqual(trail.entries.map((entry) => [entry.actor.id, entry.orgId]), [[owner.userId, org.body.id]]);
    });

    test('a session must send its CSRF token to create, edit or delete a key', async () => {
      const { client } = await customerClient();
      const created = await client.call<KeyView>('POST', '/keys', { name: 'kept' });
      for (const [method, path, body] of [
        ['POST', '/keys', { name: 'forged' }],
        ['PATCH', `/keys/${created.body.id}`, { disabled: true }],
        ['DELETE', `/keys/${created.body.id}`, undefined],
      ] as const) {
        const refused = await client.withoutCsrf(method, path, body);
        assert.equal(refused.status, 403, `${method} ${path}`);
        assert.equal(errorA(refused.body).type, 'permission_error');
      }
      const list = await client.withoutCsrf<KeyList>('GET', '/keys');
      assert.deepEqual(list.body.data.map((row) => [row.id, row.disabled]), [[created.body.id, false]], 'nothing changed');
    });

    test('a management key manages keys; an inference key on /api/v1 and a management key on /v1 are refused (403)', async () => {
      const customer = await createCustomer(gw);
      const management = await managementKey(gw, customer.userId);
      const made = await management.call<KeyView>('POST', '/keys', { name: 'from a script', scope: 'inference' });
      assert.equal(made.status, 200);
      const listed = await management.call<KeyList>('GET', '/keys');
      assert.deepEqual(new Set(listed.body.data.map((row) => row.id)), new Set([made.body.id, management.keyId]));
      const refused = await apiClient(gw, made.body.key!)('GET', '/keys');
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).code, 'wrong_key_scope');
      assert.equal((await chat(gw, management.key)).status, 403);
    });

    test('bad input is a 400 naming the field', async () => {
      const { client } = await customerClient();
      const past = new Date(gw.clock.now() - 1000).toISOString();
      const cases: Array<[unknown, string]> = [
        [{}, 'name'],
        [{ name: 'x', limit: { amount: 'lots', period: 'day' } }, 'limit.amount'],
        [{ name: 'x', limit: { amount: '-1', period: 'day' } }, 'limit.amount'],
        [{ name: 'x', limit: { amount: '1', period: 'year' } }, 'limit.period'],
        [{ name: 'x', rpm: 0 }, 'rpm'],
        [{ name: 'x', tpm: 1.5 }, 'tpm'],
        [{ name: 'x', expiresAt: 'tomorrow' }, 'expiresAt'],
        [{ name: 'x', expiresAt: past }, 'expiresAt'],
        [{ name: 'x', allowedModels: ['no-such-model'] }, 'allowedModels'],
        [{ name: 'x', scope: 'root' }, 'scope'],
      ];
      for (const [body, param] of cases) {
        const response = await client.call('POST', '/keys', body);
        assert.equal(response.status, 400, JSON.stringify(body));
        assert.equal(errorA(response.body).param, param, JSON.stringify(body));
      }
      const created = await client.call<KeyView>('POST', '/keys', { name: 'ok' });
      const badPatch = await client.call('PATCH', `/keys/${created.body.id}`, { disabled: 'yes' });
      assert.equal(badPatch.status, 400);
      assert.equal(errorA(badPatch.body).param, 'disabled');
      assert.equal((await client.call('GET', '/keys?limit=0')).status, 400);
      assert.deepEqual((await client.call<KeyList>('GET', '/keys')).body.data.map((row) => row.name), ['ok'], 'no refused key was made');
    });

    test('the operator lists keys by user, org and text with cursors, reads and edits any key; audited as admin', async () => {
      const { userId, client } = await customerClient();
      const ids: string[] = [];
      for (const name of ['alpha-key', 'beta-key', 'gamma-key']) {
        ids.push((await client.call<KeyView>('POST', '/keys', { name })).body.id);
        gw.clock.advance(1);
      }
      const first = await gw.admin<KeyList>('GET', `/keys?userId=${userId}&limit=2`);
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.data.map((row) => row.name), ['gamma-key', 'beta-key'], 'newest first');
      assert.ok(first.body.next_cursor);
      const second = await gw.admin<KeyList>('GET', `/keys?userId=${userId}&limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual({ names: second.body.data.map((row) => row.name), next: second.body.next_cursor }, { names: ['alpha-key'], next: null });
      // Case-insensitive; a '-' keeps the text from matching inside a key's random id or start (the search reads those too).
      const found = await gw.admin<KeyList>('GET', `/keys?userId=${userId}&query=ETA-K`);
      assert.deepEqual(found.body.data.map((row) => row.name), ['beta-key']);

      const patched = await gw.admin<KeyView>('PATCH', `/keys/${ids[0]}`, { limit: { amount: '1.00', period: 'week' }, tpm: 500 });
      assert.deepEqual({ status: patched.status, limit: patched.body.limit, tpm: patched.body.tpm, remaining: patched.body.remaining }, { status: 200, limit: { amount: '1.00', period: 'week' }, tpm: 500, remaining: '1.00' });
      assert.equal((await gw.admin<KeyView>('GET', `/keys/${ids[0]}`)).body.tpm, 500);
      assert.equal((await client.call<KeyView>('GET', `/keys/${ids[0]}`)).body.tpm, 500, 'the owner sees the operator\'s change');
      assert.equal((await gw.admin('GET', '/keys/key_missing')).status, 404);
      assert.equal((await gw.admin('PATCH', '/keys/key_missing', { name: 'x' })).status, 404);
      assert.equal((await gw.admin('PATCH', `/keys/${ids[0]}`, { rpm: -1 })).status, 400);
      const trail = await gw.app.services.audit.list({ targetId: ids[0], action: 'key.update', limit: 10 });
      assert.deepEqual(trail.entries.map((entry) => entry.actor.type), ['admin']);
    });
  });
}
