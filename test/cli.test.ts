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
