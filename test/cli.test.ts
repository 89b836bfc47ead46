import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startTestGateway, TEST_MASTER_KEY } from './helpers/gateway.ts';
import { createAssistant } from './helpers/assistants-e2e.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'tollgate.js');

/** The `tollgate` command does the admin API's jobs on the configured database. */
test('the CLI creates users, keys and credits on the database a gateway then serves from', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent' };
  const cli = async (...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await run(process.execPath, [BIN, ...args], { env });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  try {
    const imported = await cli('models', 'import');
    assert.ok(Number(imported.imported) > 10, 'the shipped catalog was imported');
    const user = await cli('users', 'create', '--name', 'cli user', '--balance', '2.50');
    assert.equal(user.balance, '2.50');
    const key = await cli('keys', 'create', '--user', String(user.id), '--allow', 'gpt-4o-mini,gpt-4.1');
    assert.deepEqual(key.allowedModels, ['gpt-4o-mini', 'gpt-4.1']);
    assert.match(String(key.key), /^tg-/);
    const credited = await cli('balance', 'credit', '--user', String(user.id), '--amount', '1.25');
    assert.equal(credited.balance, '3.75');
    await assert.rejects(run(process.execPath, [BIN, 'balance', 'credit', '--user', String(user.id), '--amount', 'lots'], { env }), /must be a decimal/);

    const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization: String(key.key) } });
      assert.equal(models.status, 200);
      const ids = ((await models.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id).sort();
      assert.deepEqual(ids, ['gpt-4.1', 'gpt-4o-mini']);
      assert.equal(await gw.balance({ userId: String(user.id) }), '3.75');
    } finally {
      await gw.close();
    }
    const revoked = await cli('keys', 'revoke', String(key.id));
    assert.deepEqual(revoked, { ok: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The CLI and the admin API are doors onto the same service methods: a rule one enforces, the other enforces too. */
test('keys create and bots create refuse a user outside the org, and unknown allowed models, at the CLI as at the admin API', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent' };
  const cli = async (...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await run(process.execPath, [BIN, ...args], { env });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  const cliFails = async (args: string[], message: RegExp): Promise<void> => {
    await assert.rejects(run(process.execPath, [BIN, ...args], { env }), (error: { code?: number; stderr?: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr ?? '', message);
      return true;
    });
  };
  try {
    await cli('models', 'import');
    const owner = await cli('users', 'create', '--name', 'owner');
    const outsider = await cli('users', 'create', '--name', 'outsider');
    const org = await cli('orgs', 'create', '--name', 'acme', '--owner', String(owner.id));
    const notMember = /orgId: user '.+' is not a member of '.+'/;

    await cliFails(['keys', 'create', '--user', String(outsider.id), '--org', String(org.id)], notMember);
    await cliFails(['bots', 'create', '--user', String(outsider.id), '--org', String(org.id), '--assistant', 'asst_none'], notMember);
    await cliFails(['keys', 'create', '--user', String(outsider.id), '--allow', 'gpt-4o-mini,no-such-model'], /allowedModels: model 'no-such-model' does not exist/);

    const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      const key = await gw.admin<{ error: { message: string } }>('POST', '/keys', { userId: outsider.id, orgId: org.id });
      assert.equal(key.status, 400);
      assert.match(key.body.error.message, notMember);
      const bot = await gw.admin<{ error: { message: string } }>('POST', '/bots', { userId: outsider.id, orgId: org.id, assistantId: 'asst_none' });
      assert.equal(bot.status, 400);
      assert.match(bot.body.error.message, notMember);
      const unknownModel = await gw.admin<{ error: { message: string } }>('POST', '/keys', { userId: outsider.id, allowedModels: ['no-such-model'] });
      assert.equal(unknownModel.status, 400);
      assert.match(unknownModel.body.error.message, /allowedModels: model 'no-such-model' does not exist/);
    } finally {
      await gw.close();
    }
    // The owner is a member: the same door lets a business key through.
    const business = await cli('keys', 'create', '--user', String(owner.id), '--org', String(org.id));
    assert.equal(business.orgId, org.id);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** `keys list`, `keys show` and `keys update` go through the keys service as the admin API does (same rules, same audit). */
test('the CLI lists, shows and updates keys; its limits are the ones the gateway enforces', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent' };
  const cli = async (...args: string[]): Promise<Record<string, unknown>> => {
    const { stdout } = await run(process.execPath, [BIN, ...args], { env });
    return JSON.parse(stdout) as Record<string, unknown>;
  };
  try {
    await cli('models', 'import');
    const user = await cli('users', 'create', '--name', 'cli user', '--balance', '2.50');
    const key = await cli('keys', 'create', '--user', String(user.id), '--name', 'batch job');
    const updated = await cli('keys', 'update', String(key.id), '--limit', '1.50', '--period', 'week', '--rpm', '7', '--disable');
    assert.deepEqual(
      { limit: updated.limit, rpm: updated.rpm, disabled: updated.disabled, remaining: updated.remaining },
      { limit: { amount: '1.50', period: 'week' }, rpm: 7, disabled: true, remaining: '1.50' },
    );
    const listed = await cli('keys', 'list', '--user', String(user.id));
    assert.deepEqual((listed.data as Array<{ id: string; name: string }>).map((row) => [row.id, row.name]), [[key.id, 'batch job']]);
    assert.equal((await cli('keys', 'show', String(key.id))).disabled, true);
    await assert.rejects(run(process.execPath, [BIN, 'keys', 'update', String(key.id), '--rpm', 'many'], { env }), /whole number/);

    const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: String(key.key) } })).status, 401, 'disabled by the CLI');
      const audit = await gw.app.services.audit.list({ targetId: String(key.id), action: 'key.update', limit: 5 });
      assert.deepEqual(audit.entries.map((entry) => entry.actor.type), ['admin']);
    } finally {
      await gw.close();
    }
    const enabled = await cli('keys', 'update', String(key.id), '--enable', '--no-limit', '--rpm', 'none');
    assert.deepEqual({ limit: enabled.limit, rpm: enabled.rpm, disabled: enabled.disabled }, { limit: null, rpm: null, disabled: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** The CLI's list, show and update commands and vouchers go through the admin API's services: what one door does, the other sees. */
test('users, orgs, vouchers and audit from the CLI: list, show, update, create; the gateway then redeems a CLI voucher', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent' };
  const cli = async <T = Record<string, unknown>>(...args: string[]): Promise<T> => {
    const { stdout } = await run(process.execPath, [BIN, ...args], { env });
    return JSON.parse(stdout) as T;
  };
  try {
    const owner = await cli('users', 'create', '--name', 'Olwen');
    await cli('users', 'create', '--name', 'Other');
    const listed = await cli<{ object: string; data: Array<{ id: string }>; next_cursor: string | null }>('users', 'list', '--query', 'olwen');
    assert.deepEqual({ object: listed.object, ids: listed.data.map((user) => user.id), next: listed.next_cursor }, { object: 'list', ids: [owner.id], next: null });
    const firstPage = await cli<{ data: unknown[]; next_cursor: string }>('users', 'list', '--limit', '1');
    const secondPage = await cli<{ data: Array<{ id: string }> }>('users', 'list', '--limit', '1', '--cursor', firstPage.next_cursor);
    assert.equal(secondPage.data[0]!.id, owner.id, 'the cursor walks on to the older user');
    const updated = await cli('users', 'update', String(owner.id), '--name', 'Olwen B', '--email', 'olwen@example.com', '--password', 'olwen-password', '--operator', 'yes');
    assert.deepEqual({ name: updated.name, email: updated.email, operator: updated.operator }, { name: 'Olwen B', email: 'olwen@example.com', operator: true });
    assert.equal((await cli('users', 'show', String(owner.id))).name, 'Olwen B');

    const org = await cli('orgs', 'create', '--name', 'acme', '--owner', String(owner.id));
    const orgUpdated = await cli('orgs', 'update', String(org.id), '--prompt-caching', 'on', '--name', 'Acme Ltd');
    assert.deepEqual({ name: orgUpdated.name, promptCaching: orgUpdated.promptCaching }, { name: 'Acme Ltd', promptCaching: true });
    const shown = await cli<{ members: Array<{ userId: string; role: string }> }>('orgs', 'show', String(org.id));
    assert.deepEqual(shown.members.map((member) => [member.userId, member.role]), [[owner.id, 'owner']]);
    assert.equal((await cli<{ data: unknown[] }>('orgs', 'list')).data.length, 1);

    const made = await cli<{ codes: string[] }>('vouchers', 'create', '--amount', '2.00', '--count', '3', '--note', 'from the cli');
    assert.equal(made.codes.length, 3);
    const vouchers = await cli<{ data: Array<{ state: string; note: string }> }>('vouchers', 'list', '--state', 'active');
    assert.deepEqual(vouchers.data.map((voucher) => voucher.state), ['active', 'active', 'active']);
    await assert.rejects(run(process.execPath, [BIN, 'vouchers', 'create', '--amount', '2.00', '--count', '1001'], { env }), /count: must be an integer from 1 to 1000/);
    await assert.rejects(run(process.execPath, [BIN, 'users', 'show', 'usr_nope'], { env }), /does not exist/);

    const audit = await cli<{ data: Array<{ action: string; actor: { type: string } }> }>('audit', 'list', '--target', String(owner.id));
    assert.deepEqual(audit.data.map((entry) => entry.action), ['user.update', 'user.create']);
    assert.ok(audit.data.every((entry) => entry.actor.type === 'admin'));
    assert.deepEqual((await cli<{ data: Array<{ action: string }> }>('audit', 'list', '--org', String(org.id))).data.map((entry) => entry.action), ['org.update', 'org.create']);

    const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      const login = await fetch(`${gw.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'olwen@example.com', password: 'olwen-password' }) });
      assert.equal(login.status, 200, 'the password set by the CLI signs in');
      const { csrfToken } = (await login.json()) as { csrfToken: string };
      const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
      const redeemed = await fetch(`${gw.url}/api/v1/vouchers/redeem`, {
        method: 'POST',
        headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
        body: JSON.stringify({ code: made.codes[0], orgId: org.id }),
      });
      assert.equal(redeemed.status, 200);
      assert.equal(await gw.balance({ orgId: String(org.id) }), '2.00');
    } finally {
      await gw.close();
    }
    assert.equal((await cli<{ data: unknown[] }>('vouchers', 'list', '--state', 'redeemed')).data.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Bots, providers, members, models and deliveries from the CLI: the same service calls as the admin API, the same rules and audit. */
test('bots, providers, org members, models and deliveries from the CLI; a bot deleted there stops working on the gateway', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  // The test gateways' master key: the provider key sealed by one door opens at the other.
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_SECRET_KEY: TEST_MASTER_KEY.toString('hex') };
  const cli = async <T = Record<string, unknown>>(...args: string[]): Promise<T> => {
    const { stdout } = await run(process.execPath, [BIN, ...args], { env });
    return JSON.parse(stdout) as T;
  };
  const cliFails = async (args: string[], message: RegExp): Promise<void> => {
    await assert.rejects(run(process.execPath, [BIN, ...args], { env }), (error: { code?: number; stderr?: string }) => {
      assert.equal(error.code, 1);
      assert.match(error.stderr ?? '', message);
      return true;
    });
  };
  try {
    // The accounts, an assistant and a provider with a model come through the admin API; the CLI then does the rest.
    let gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    let ownerId: string, memberId: string, orgId: string, assistantId: string;
    try {
      ({ userId: ownerId } = await gw.fundedKey({ balance: '5.00' }));
      const { key } = await gw.fundedKey({ userId: ownerId });
      memberId = (await gw.admin<{ id: string }>('POST', '/users', { name: 'Member' })).body.id;
      orgId = (await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Bots Ltd', ownerId })).body.id;
      assert.equal((await gw.admin('POST', `/orgs/${orgId}/members`, { userId: memberId, role: 'member' })).status, 200);
      assistantId = String((await createAssistant(gw, key, { title: 'CLI help', modelId: 'gpt-4o-mini' })).id);
      assert.equal((await gw.admin('PUT', '/providers/spare', { type: 'openai', baseUrl: 'https://spare.example.com/v1', apiKey: 'sk-cli-secret' })).status, 200);
      assert.equal((await gw.admin('PUT', '/models/spare-model', { kind: 'chat', provider: 'spare', upstreamModel: 'gpt-4o-mini' })).status, 200);
    } finally {
      await gw.close();
    }

    const bot = await cli<{ id: string; token: string; name: string }>('bots', 'create', '--user', ownerId, '--assistant', assistantId, '--name', 'Desk');
    assert.match(bot.token, /^tgb-/);
    const listed = await cli<{ data: Array<{ id: string; token?: string }> }>('bots', 'list', '--user', ownerId);
    assert.deepEqual(listed.data.map((row) => [row.id, row.token]), [[bot.id, undefined]]);
    const updated = await cli('bots', 'update', bot.id, '--name', 'Front desk', '--webhook', 'https://93.184.216.34/hook');
    assert.deepEqual({ name: updated.name, webhookUrl: updated.webhookUrl }, { name: 'Front desk', webhookUrl: 'https://93.184.216.34/hook' });
    await cliFails(['bots', 'update', bot.id, '--webhook', 'ftp://chat.example.com/hook'], /webhookUrl: must be an http or https URL/);
    assert.equal((await cli('bots', 'delete', bot.id)).deleted, true);

    assert.deepEqual(await cli('providers', 'update', 'spare', '--api-key', 'none'), {
      id: 'spare',
      type: 'openai',
      baseUrl: 'https://spare.example.com/v1',
      hasApiKey: false,
      channels: [{ id: 'default', baseUrl: 'https://spare.example.com/v1', hasApiKey: false, weight: 1, priority: 0, models: null }],
    });
    await cliFails(['providers', 'delete', 'spare'], /still serves 1 model \(spare-model\)/);
    assert.equal((await cli('models', 'delete', 'spare-model')).deleted, true);
    assert.equal((await cli('providers', 'delete', 'spare')).deleted, true);

    assert.equal((await cli('orgs', 'members', 'update', orgId, memberId, '--role', 'admin')).role, 'admin');
    await cliFails(['orgs', 'members', 'update', orgId, ownerId, '--role', 'member'], /must keep an owner/);
    assert.equal((await cli('orgs', 'members', 'remove', orgId, memberId)).deleted, true);
    await cliFails(['deliveries', 'retry', 'dlv_nope'], /Delivery 'dlv_nope' does not exist/);

    gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
    try {
      const event = await fetch(`${gw.url}/api/bot`, {
        method: 'POST',
        headers: { authorization: bot.token, 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'e1', client_id: 'c1', chat_id: 'chat-1', event: 'CLIENT_MESSAGE', message: { type: 'TEXT', text: 'hi' } }),
      });
      assert.equal(event.status, 401, 'the token of a bot deleted by the CLI is refused');
      assert.equal((await gw.admin('GET', `/bots/${bot.id}`)).status, 404);
      assert.equal((await gw.admin('GET', '/providers/spare')).status, 404);
      assert.equal((await gw.admin('GET', '/models/spare-model')).status, 404);
      const members = await gw.admin<{ data: Array<{ userId: string; role: string }> }>('GET', `/orgs/${orgId}/members`);
      assert.deepEqual(members.body.data.map((row) => [row.userId, row.role]), [[ownerId, 'owner']]);
      const actions = (await gw.app.services.audit.list({ targetId: bot.id, limit: 10 })).entries.map((entry) => [entry.action, entry.actor.type]);
      assert.deepEqual(actions, [['bot.delete', 'admin'], ['bot.update', 'admin'], ['bot.create', 'admin']]);
      assert.deepEqual((await gw.app.services.audit.list({ targetId: 'spare', limit: 10 })).entries.map((entry) => entry.action), ['provider.delete', 'provider.update', 'provider.put']);
      assert.deepEqual((await gw.app.services.audit.list({ targetId: memberId, orgId, limit: 10 })).entries.map((entry) => entry.action), ['member.remove', 'member.update', 'member.update']);
    } finally {
      await gw.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
