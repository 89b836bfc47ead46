import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startTestGateway } from './helpers/gateway.ts';

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
