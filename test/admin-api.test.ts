import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimulator } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, errorA, ledger, openAiClient, tokensCostMicros, type JsonRecord } from './helpers/e2e.ts';

const UNAUTHORIZED = { error: { message: 'Unauthorized', type: 'unauthorized_request_error', param: null, code: null } };

/** Calls the admin API with any Authorization header (or none). */
async function adminAs(gw: TestGateway, authorization: string | undefined, method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown; headers: Headers }> {
  const headers: Record<string, string> = {};
  if (authorization !== undefined) headers.authorization = authorization;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${gw.url}/admin/v1${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined, headers: response.headers };
}

/** A 4xx of the admin API: status, shape A, request id; returns the error. */
function expectAdminError(response: { status: number; body: unknown }, status: number, messageStart?: string): ReturnType<typeof errorA> {
  assert.equal(response.status, status, JSON.stringify(response.body));
  const error = errorA(response.body);
  if (messageStart !== undefined) assert.ok(error.message.startsWith(messageStart), `message "${error.message}" starts with "${messageStart}"`);
  return error;
}

describe('admin API (/admin/v1)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('every route answers 401 in shape A without the admin token or with a wrong one', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/users', { name: 'x' }],
      ['POST', '/orgs', { name: 'x', ownerId: 'usr_x' }],
      ['PATCH', '/orgs/org_x', { name: 'y' }],
      ['POST', '/orgs/org_x/members', { userId: 'usr_x', role: 'member' }],
      ['POST', '/keys', { userId: 'usr_x' }],
      ['DELETE', '/keys/key_x'],
      ['POST', '/balance', { userId: 'usr_x', amount: '1.00' }],
      ['GET', '/balance?userId=usr_x'],
      ['PUT', '/providers/p1', { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1' }],
      ['PUT', '/models/m1', { kind: 'chat', provider: 'openai' }],
      ['PATCH', '/models/gpt-4.1', { title: 'x' }],
      ['GET', '/ledger?userId=usr_x'],
    ];
    for (const [method, path, body] of routes) {
      // Wrong tokens are limited per address and minute (admin-guesses.test.ts); each route gets a fresh minute here.
      gw.clock.advance(60_000);
      for (const authorization of [undefined, 'Bearer wrong-admin-token-0000000000', `Bearer ${gw.adminToken}x`]) {
        const response = await adminAs(gw, authorization, method, path, body);
        assert.equal(response.status, 401, `${method} ${path} with ${authorization ?? 'no token'}`);
        assert.deepEqual(response.json, UNAUTHORIZED, `${method} ${path} body`);
        assert.ok(response.headers.get('x-request-id'));
      }
    }
    gw.clock.advance(60_000);
    const { key } = await gw.fundedKey();
    const withUserKey = await adminAs(gw, `Bearer ${key}`, 'GET', '/balance?userId=usr_x');
    assert.equal(withUserKey.status, 401, 'an API key is not an admin token');
  });

  test('POST /users: creates with a balance; 400 on a bad balance or name', async () => {
    const created = await gw.admin<JsonRecord>('POST', '/users', { name: 'Ada', balance: '12.50' });
    assert.equal(created.status, 200);
    assert.match(String(created.body.id), /^usr_/);
    assert.equal(created.body.name, 'Ada');
    assert.equal(micros(String(created.body.balance)), micros('12.50'));
    assert.equal(await balanceMicros(gw, { userId: String(created.body.id) }), micros('12.50'));
    expectAdminError(await gw.admin('POST', '/users', { name: 'Bob', balance: 'abc' }), 400, 'balance: ');
    expectAdminError(await gw.admin('POST', '/users', { balance: '1.00' }), 400, 'name: ');
  });

  test('POST /orgs and PATCH /orgs/:id; 400 and 404', async () => {
    const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'Owner' });
    const org = await gw.admin<JsonRecord>('POST', '/orgs', { name: 'Acme', ownerId: owner.body.id, balance: '7.00' });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    assert.match(String(org.body.id), /^org_/);
    assert.equal(org.body.name, 'Acme');
    assert.equal(org.body.promptCaching, false, 'caching is off by default');
    assert.equal(micros(String(org.body.balance)), micros('7.00'));
    const orgId = String(org.body.id);

    const patched = await gw.admin<JsonRecord>('PATCH', `/orgs/${orgId}`, { promptCaching: true, name: 'Acme Ltd' });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.id, orgId);
    assert.equal(patched.body.name, 'Acme Ltd');
    assert.equal(patched.body.promptCaching, true);
    assert.equal(micros(String(patched.body.balance)), micros('7.00'));

    expectAdminError(await gw.admin('POST', '/orgs', { ownerId: owner.body.id }), 400, 'name: ');
    expectAdminError(await gw.admin('POST', '/orgs', { name: 'X', ownerId: owner.body.id, balance: 'lots' }), 400, 'balance: ');
    expectAdminError(await gw.admin('POST', '/orgs', { name: 'X', ownerId: 'usr_nobody' }), 404);
    expectAdminError(await gw.admin('PATCH', `/orgs/${orgId}`, { promptCaching: 'yes' }), 400, 'promptCaching: ');
    expectAdminError(await gw.admin('PATCH', '/orgs/org_nobody', { name: 'Y' }), 404);
  });

  test('POST /orgs/:id/members lets a member get a business key; 400 and 404', async () => {
    const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'Owner' });
    const member = await gw.admin<{ id: string }>('POST', '/users', { name: 'Member', balance: '1.00' });
    const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Team', ownerId: owner.body.id, balance: '3.00' });
    expectAdminError(await gw.admin('POST', '/keys', { userId: member.body.id, orgId: org.body.id }), 400, 'orgId: ');

    const added = await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.body.id, role: 'member' });
    assert.equal(added.status, 200);
    assert.deepEqual(added.body, { ok: true });
    const key = await gw.admin<JsonRecord>('POST', '/keys', { userId: member.body.id, orgId: org.body.id });
    assert.equal(key.status, 200, JSON.stringify(key.body));
    assert.equal(key.body.orgId, org.body.id);

    expectAdminError(await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.body.id, role: 'king' }), 400, 'role: ');
    expectAdminError(await gw.admin('POST', '/orgs/org_nobody/members', { userId: member.body.id, role: 'member' }), 404);
    expectAdminError(await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: 'usr_nobody', role: 'admin' }), 404);

    // The admin door keeps the organisation's rule too: its last owner cannot be demoted; after another owner is made, it can.
    expectAdminError(await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: owner.body.id, role: 'member' }), 409);
    assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.body.id, role: 'owner' })).status, 200);
    assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: owner.body.id, role: 'member' })).status, 200);
  });

  test('POST /keys and DELETE /keys/:id: the key works, then stops at once; 400 and 404', async () => {
    const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'Key owner', balance: '1.00' });
    const created = await gw.admin<JsonRecord>('POST', '/keys', { userId: user.body.id, name: 'ci', allowedModels: ['gpt-4.1'] });
    assert.equal(created.status, 200);
    assert.match(String(created.body.id), /^key_/);
    assert.equal(typeof created.body.key, 'string');
    assert.equal(created.body.userId, user.body.id);
    assert.equal(created.body.orgId, null);
    assert.deepEqual(created.body.allowedModels, ['gpt-4.1']);
    const key = String(created.body.key);
    const models = (): Promise<Response> => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await models()).status, 200);

    const revoked = await gw.admin('DELETE', `/keys/${String(created.body.id)}`);
    assert.equal(revoked.status, 200);
    assert.deepEqual(revoked.body, { ok: true });
    assert.equal((await models()).status, 401);
    expectAdminError(await gw.admin('DELETE', `/keys/${String(created.body.id)}`), 404);
    expectAdminError(await gw.admin('DELETE', '/keys/key_nobody'), 404);

    expectAdminError(await gw.admin('POST', '/keys', { userId: user.body.id, allowedModels: 'all' }), 400, 'allowedModels: ');
    expectAdminError(await gw.admin('POST', '/keys', {}), 400, 'userId: ');
    expectAdminError(await gw.admin('POST', '/keys', { userId: 'usr_nobody' }), 404);
  });

  test('POST /balance credits and debits (negative amounts); GET /balance; 400 and 404', async () => {
    const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'Payer', balance: '5.00' });
    const userId = user.body.id;
    const credited = await gw.admin<{ balance: string }>('POST', '/balance', { userId, amount: '2.50' });
    assert.equal(credited.status, 200);
    assert.equal(micros(credited.body.balance), micros('7.50'));
    const debited = await gw.admin<{ balance: string }>('POST', '/balance', { userId, amount: '-3.25' });
    assert.equal(debited.status, 200);
    assert.equal(micros(debited.body.balance), micros('4.25'));
    const read = await gw.admin<{ balance: string }>('GET', `/balance?userId=${userId}`);
    assert.equal(read.status, 200);
    assert.equal(micros(read.body.balance), micros('4.25'));

    const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'Org owner' });
    const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Funded', ownerId: owner.body.id });
    const orgCredit = await gw.admin<{ balance: string }>('POST', '/balance', { orgId: org.body.id, amount: '1.000001' });
    assert.equal(micros(orgCredit.body.balance), micros('1.000001'));
    assert.equal(await balanceMicros(gw, { orgId: org.body.id }), micros('1.000001'));

    expectAdminError(await gw.admin('POST', '/balance', { userId, amount: 'abc' }), 400, 'amount: ');
    expectAdminError(await gw.admin('POST', '/balance', { amount: '1.00' }), 400);
    expectAdminError(await gw.admin('POST', '/balance', { userId, orgId: org.body.id, amount: '1.00' }), 400);
    expectAdminError(await gw.admin('POST', '/balance', { userId: 'usr_nobody', amount: '1.00' }), 404);
    expectAdminError(await gw.admin('GET', '/balance?userId=usr_nobody'), 404);
    expectAdminError(await gw.admin('GET', '/balance'), 400);
    assert.equal(await balanceMicros(gw, { userId }), micros('4.25'), 'failed calls changed nothing');
  });

  test('GET /ledger lists the account entries newest first; 404 for an unknown account', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '1.00' });
    gw.clock.advance(1_000);
    await gw.admin('POST', '/balance', { userId, amount: '2.00' });
    gw.clock.advance(1_000);
    const completion = await openAiClient(gw, key).chat.completions.create({ model: 'gpt-4.1', messages: [{ role: 'user', content: 'ledger' }] });
    gw.clock.advance(1_000);
    await gw.admin('POST', '/balance', { userId, amount: '-0.50' });
    const rows = await ledger(gw, { userId });
    const cost = micros(Number(asRecord(completion.usage).total_cost));
    assert.deepEqual(rows.map((row) => micros(row.amount)), [-micros('0.50'), -cost, micros('2.00'), micros('1.00')]);
    assert.equal(rows[1]!.kind, 'charge');
    assert.equal(rows[1]!.model, 'gpt-4.1');
    const times = rows.map((row) => Date.parse(row.createdAt));
    assert.deepEqual(times, [...times].sort((a, b) => b - a), 'createdAt never increases down the list');
    expectAdminError(await gw.admin('GET', '/ledger?userId=usr_nobody'), 404);
    expectAdminError(await gw.admin('GET', '/ledger'), 400);
  });

  test('PUT /models/:id creates a model usable at once through /v1/chat/completions; 400 on a bad body', async () => {
    const put = await gw.admin<JsonRecord>('PUT', '/models/house-model', {
      kind: 'chat', provider: 'openai', upstreamModel: 'gpt-4.1-mini', title: 'House model', max_capacity: 8192, cost_context: '0.0040', cost_completion: '0.0120',
    });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.equal(put.body.id, 'house-model');
    assert.equal(put.body.cost_context, '0.0040');
    const { key, userId } = await gw.fundedKey({ balance: '1.00' });
    const before = await balanceMicros(gw, { userId });
    const completion = await openAiClient(gw, key).chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'hello house' }] });
    assert.equal(completion.choices[0]?.message.role, 'assistant');
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'gpt-4.1-mini', 'the upstream model id is sent');
    const usage = completion.usage!;
    const expected = tokensCostMicros(usage.prompt_tokens, '0.0040') + tokensCostMicros(usage.completion_tokens, '0.0120');
    assert.equal(micros(Number(asRecord(usage).total_cost)), expected);
    assert.equal(await balanceMicros(gw, { userId }), before - expected);

    expectAdminError(await gw.admin('PUT', '/models/bad-kind', { kind: 'banana', provider: 'openai' }), 400, 'kind: ');
    expectAdminError(await gw.admin('PUT', '/models/bad-price', { kind: 'chat', provider: 'openai', cost_context: 'abc' }), 400, 'cost_context: ');
    expectAdminError(await gw.admin('PUT', '/models/no-provider', { kind: 'chat' }), 400, 'provider: ');
  });

  test('PATCH /models/:id changes only the fields sent; 400 and 404', async () => {
    const put = await gw.admin('PUT', '/models/patch-me', { kind: 'chat', provider: 'openai', title: 'Patch me', max_capacity: 4096, cost_context: '0.0030', cost_completion: '0.0060', vision: true });
    assert.equal(put.status, 200);
    const patched = await gw.admin<JsonRecord>('PATCH', '/models/patch-me', { deprecated_at: '2027-01-01T00:00:00Z', deprecation_redirect_to: 'gpt-4.1' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(Date.parse(String(patched.body.deprecated_at)), Date.parse('2027-01-01T00:00:00Z'));
    assert.equal(patched.body.deprecation_redirect_to, 'gpt-4.1');
    assert.equal(patched.body.deprecated, false);
    assert.deepEqual(
      { title: patched.body.title, max_capacity: patched.body.max_capacity, cost_context: patched.body.cost_context, cost_completion: patched.body.cost_completion, vision: patched.body.vision },
      { title: 'Patch me', max_capacity: 4096, cost_context: '0.0030', cost_completion: '0.0060', vision: true },
      'fields not sent keep their values',
    );
    const titled = await gw.admin<JsonRecord>('PATCH', '/models/patch-me', { title: 'Renamed' });
    assert.equal(titled.body.title, 'Renamed');
    assert.equal(Date.parse(String(titled.body.deprecated_at)), Date.parse('2027-01-01T00:00:00Z'), 'a later PATCH keeps the retirement date');
    assert.equal(titled.body.deprecation_redirect_to, 'gpt-4.1');

    expectAdminError(await gw.admin('PATCH', '/models/patch-me', { cost_context: 'abc' }), 400, 'cost_context: ');
    expectAdminError(await gw.admin('PATCH', '/models/patch-me', { deprecated_at: 'next tuesday' }), 400, 'deprecated_at: ');
    expectAdminError(await gw.admin('PATCH', '/models/patch-me', { deprecation_redirect_to: 'no-such-model' }), 400, 'deprecation_redirect_to: ');
    expectAdminError(await gw.admin('PATCH', '/models/no-such-model', { title: 'x' }), 404);
  });

  test('PUT /providers/:id: a model on the new provider reaches a second simulator', async () => {
    const second = await startSimulator();
    try {
      const provider = await gw.admin<JsonRecord>('PUT', '/providers/second', { type: 'openai', baseUrl: `${second.url}/v1`, apiKey: 'second-secret' });
      assert.equal(provider.status, 200, JSON.stringify(provider.body));
      const health = { state: 'healthy', requests: 0, errors: 0, errorRate: 0, latencyMs: { p50: null, p99: null }, coolingUntil: null };
      const channel = { id: 'default', baseUrl: `${second.url}/v1`, hasApiKey: true, weight: 1, priority: 0, models: null };
      assert.deepEqual(provider.body, { id: 'second', type: 'openai', baseUrl: `${second.url}/v1`, hasApiKey: true, channels: [{ ...channel, health }] }, 'the api key is never returned');
      const listed = await gw.admin<{ data: JsonRecord[] }>('GET', '/providers');
      assert.deepEqual(listed.body.data.find((entry) => entry.id === 'second'), provider.body);
      assert.ok(!JSON.stringify(listed.body).includes('second-secret'));
      assert.deepEqual((await gw.admin('GET', '/providers/second')).body, provider.body);
      assert.equal((await gw.admin('GET', '/providers/nope')).status, 404);
      const trail = await gw.app.services.audit.list({ targetId: 'second', limit: 5 });
      assert.deepEqual(trail.entries.map((entry) => [entry.action, entry.actor.type, entry.after]), [['provider.put', 'admin', { type: 'openai', channels: [channel] }]]);
      assert.ok(!JSON.stringify(trail).includes('second-secret'), 'the audit trail never holds the key');
      const model = await gw.admin('PUT', '/models/second-model', { kind: 'chat', provider: 'second', cost_context: '0.0010', cost_completion: '0.0020' });
      assert.equal(model.status, 200, JSON.stringify(model.body));
      assert.equal((await gw.admin<JsonRecord>('GET', '/models/second-model')).body.cost_context, '0.0010');
      assert.equal((await gw.admin('GET', '/models/no-such-model')).status, 404);
      assert.equal((await gw.admin('PATCH', '/models/second-model', { cost_context: '0.0015' })).status, 200);
      const priced = await gw.app.services.audit.list({ targetId: 'second-model', limit: 5 });
      assert.deepEqual(priced.entries.map((entry) => [entry.action, entry.before, entry.after]), [
        ['model.update', { cost_context: '0.0010' }, { cost_context: '0.0015' }],
        ['model.put', null, priced.entries[1]?.after],
      ]);

      const { key } = await gw.fundedKey({ balance: '1.00' });
      const before = gw.simulator.requests.length;
      const completion = await openAiClient(gw, key).chat.completions.create({ model: 'second-model', messages: [{ role: 'user', content: 'which vendor?' }] });
      assert.equal(completion.model, 'second-model');
      const received = second.lastRequest('/v1/chat/completions');
      assert.ok(received, 'the second simulator got the call');
      assert.equal(asRecord(received.json).model, 'second-model');
      assert.equal(received.headers.authorization, 'Bearer second-secret');
      assert.equal(gw.simulator.requests.length, before, 'the default vendor did not');

      expectAdminError(await gw.admin('PUT', '/providers/third', { type: 'azure', baseUrl: `${second.url}/v1` }), 400, 'type: ');
      expectAdminError(await gw.admin('PUT', '/providers/third', { type: 'openai', baseUrl: 'not a url' }), 400, 'baseUrl: ');
    } finally {
      await second.close();
    }
  });

  test('GET /deliveries?taskId=… requires the admin token and answers for an unknown task', async () => {
    for (const authorization of [undefined, 'Bearer wrong-admin-token-0000000000']) {
      const refused = await adminAs(gw, authorization, 'GET', '/deliveries?taskId=task_unknown');
      assert.equal(refused.status, 401, `${authorization ?? 'no token'}: ${JSON.stringify(refused.json)}`);
      assert.deepEqual(refused.json, UNAUTHORIZED);
    }
    // DESIGN §4 lists this route; an unknown task has no attempts (an empty list) or is a 404 of the route itself.
    const response = await gw.admin('GET', '/deliveries?taskId=task_unknown');
    if (response.status === 200) {
      assert.deepEqual(asArray(asRecord(response.body).data), []);
    } else {
      const error = expectAdminError(response, 404);
      assert.ok(!error.message.startsWith('No route'), `the route exists (got "${error.message}")`);
    }
  });

  test('GET /v1/models with a key limited to two models lists exactly those two, in SPEC 2.3 shape', async () => {
    const { key } = await gw.fundedKey({ allowedModels: ['gpt-4.1', 'text-embedding-3-small'] });
    const response = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(response.status, 200);
    const body = asRecord(await response.json());
    assert.equal(body.object, 'list');
    const data = asArray(body.data).map((entry) => asRecord(entry));
    assert.deepEqual(data.map((entry) => entry.id).sort(), ['gpt-4.1', 'text-embedding-3-small']);
    const model = data.find((entry) => entry.id === 'gpt-4.1')!;
    assert.equal(model.object, 'model');
    assert.ok(Number.isInteger(model.created));
    assert.equal(typeof model.title, 'string');
    assert.ok(Number.isInteger(model.max_capacity));
    assert.equal(model.cost_context, '0.0020');
    assert.equal(model.cost_completion, '0.0080');
    assert.equal(model.deprecated, false);
    assert.equal(model.deprecated_at, null);
    assert.equal(model.deprecation_redirect_to, null);
  });
});
