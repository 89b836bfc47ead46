import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { promisify } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import { buildApp } from '../src/app.ts';
import { loadConfig, type Config } from '../src/config/config.ts';
import { sha256Hex } from '../src/lib/hashing.ts';
import { parseMasterKey } from '../src/lib/master-key.ts';
import { openLegacySealed, SecretBox } from '../src/lib/secret-box.ts';
import { openRuntime } from '../src/runtime.ts';
import { openStorage } from '../src/storage/database.ts';

const BIN = join(import.meta.dirname, '..', 'bin', 'tollgate.js');
const directories: string[] = [];
after(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function freshDataDir(): string {
  const root = mkdtempSync(join(tmpdir(), 'tollgate-secrets-'));
  directories.push(root);
  return join(root, 'data');
}

const configFor = (dataDir: string, environment: Record<string, string> = {}): Readonly<Config> =>
  loadConfig({ DATA_DIR: dataDir, TOLLGATE_LOG_LEVEL: 'silent', ...environment });

const PLAIN = { botToken: 'bot-token-plain-123', webhookKey: 'tg-webhook-signing-key-456', providerKey: 'sk-provider-key-789' };

/** How values were sealed before master keys: a key derived from the database's hash_secret. */
function legacySeal(plain: string, hashSecret: string): string {
  const key = createHash('sha256').update(`webhook-signing-key\u0000${hashSecret}`).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const encrypted = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64');
}

/** A database as the previous version left it: hash_secret and the admin token in settings, old seals, a provider key in clear. */
async function seedLegacyDatabase(databasePath: string): Promise<void> {
  mkdirSync(join(databasePath, '..'), { recursive: true });
  const storage = await openStorage(`sqlite:${databasePath}`);
  await storage.close();
  const database = new SqliteDatabase(databasePath);
  database.pragma('foreign_keys = OFF');
  database.prepare("insert into settings (key, value) values ('hash_secret', 'old-hash-secret'), ('admin_token', 'tga-old-admin-token-0000')").run();
  database
    .prepare('insert into bots (id, user_id, org_id, assistant_id, token_hash, token_sealed, webhook_url, created_at) values (?, ?, null, ?, ?, ?, null, 0)')
    .run('bot_1', 'usr_1', 'ast_1', sha256Hex(PLAIN.botToken), legacySeal(PLAIN.botToken, 'old-hash-secret'));
  database
    .prepare(
      `insert into tasks (id, kind, type, parent_id, user_id, key_id, payer_type, payer_id, model, served_model, status, percent, input, result, error, cost_nano, webhook_url, webhook_secret, created_at, updated_at)
       values ('task_1', 'media', 'image', null, 'usr_1', 'key_1', 'user', 'usr_1', 'm', 'm', 'done', 100, '{}', null, null, 0, 'https://example.com/hook', ?, 0, 0)`,
    )
    .run(legacySeal(PLAIN.webhookKey, 'old-hash-secret'));
  database.prepare("insert into providers (id, type, base_url, api_key, updated_at) values ('vendor', 'openai', 'https://example.com/v1', ?, 0)").run(PLAIN.providerKey);
  database.close();
}

function storedSecrets(databasePath: string): { bot: string; task: string; provider: string; settings: Record<string, string> } {
  const database = new SqliteDatabase(databasePath, { readonly: true });
  try {
    const value = (query: string) => (database.prepare(query).pluck().get() as string);
    const settings = Object.fromEntries((database.prepare('select key, value from settings').all() as Array<{ key: string; value: string }>).map((row) => [row.key, row.value]));
    return { bot: value('select token_sealed from bots'), task: value('select webhook_secret from tasks'), provider: value("select api_key from providers where id = 'vendor'"), settings };
  } finally {
    database.close();
  }
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('secrets at rest', () => {
  const dataDir = freshDataDir();
  const databasePath = join(dataDir, 'tollgate.db');

  test('first start: the data directory is 0700, the key file and the database files 0600, the admin token only a hash', async () => {
    mkdirSync(dataDir, { recursive: true, mode: 0o755 });
    const runtime = await openRuntime(configFor(dataDir), { useSimulator: false });
    try {
      assert.equal(mode(dataDir), 0o700);
      for (const file of ['secret.key', 'tollgate.db', 'tollgate.db-wal', 'tollgate.db-shm']) {
        assert.ok(existsSync(join(dataDir, file)), `${file} exists`);
        assert.equal(mode(join(dataDir, file)), 0o600, `${file} is 0600`);
      }
      const token = runtime.dependencies.firstAdminToken;
      assert.ok(token, 'a new admin token was generated to be printed');
      const settings = storedSecrets(databasePath).settings;
      assert.equal(settings.admin_token_hash, sha256Hex(token));
      assert.ok(!Object.values(settings).includes(token), 'the token itself is not in the database');
    } finally {
      await runtime.close();
    }
  });

  test('an upgraded database: old seals and clear provider keys are resealed under the master key, the old admin token still works', async () => {
    rmSync(databasePath, { force: true });
    rmSync(`${databasePath}-wal`, { force: true });
    rmSync(`${databasePath}-shm`, { force: true });
    await seedLegacyDatabase(databasePath);
    const runtime = await openRuntime(configFor(dataDir), { useSimulator: false });
    const app = await buildApp(runtime.dependencies);
    try {
      const stored = storedSecrets(databasePath);
      const box = runtime.dependencies.secrets;
      for (const sealed of [stored.bot, stored.task, stored.provider]) assert.match(sealed, new RegExp(`^v1\\.${box.keyId}\\.`));
      assert.equal(box.open(stored.bot), PLAIN.botToken);
      assert.equal(box.open(stored.task), PLAIN.webhookKey);
      assert.equal(app.services.catalog.provider('vendor')?.channels[0]?.apiKey, PLAIN.providerKey, 'the registry gets the provider key in clear');
      assert.equal(stored.settings.admin_token, undefined, 'the clear admin token is gone');
      assert.equal(stored.settings.admin_token_hash, sha256Hex('tga-old-admin-token-0000'));
      assert.equal(runtime.dependencies.firstAdminToken, undefined, 'no new token: the old one stays');
      const answer = await app.server.inject({ method: 'GET', url: '/admin/v1/balance?userId=usr_none', headers: { authorization: 'Bearer tga-old-admin-token-0000' } });
      assert.notEqual(answer.statusCode, 401, 'the old admin token is still accepted');
    } finally {
      await app.close();
      await runtime.close();
    }
  });

  test('a copy of the database opens nothing without the key file; with the key it does', async () => {
    const elsewhere = freshDataDir();
    mkdirSync(elsewhere, { recursive: true });
    copyFileSync(databasePath, join(elsewhere, 'tollgate.db'));
    const stored = storedSecrets(join(elsewhere, 'tollgate.db'));
    for (const [sealed, plain] of [[stored.bot, PLAIN.botToken], [stored.task, PLAIN.webhookKey], [stored.provider, PLAIN.providerKey]] as const) {
      assert.ok(!sealed.includes(plain));
      assert.equal(openLegacySealed(sealed.split('.')[2]!, stored.settings.hash_secret!, 'webhook-signing-key'), undefined, 'hash_secret opens nothing');
      assert.equal(new SecretBox(randomBytes(32)).open(sealed), undefined);
    }
    await assert.rejects(openRuntime(configFor(elsewhere), { useSimulator: false }), /sealed under a master key this gateway does not have/);
    assert.ok(!existsSync(join(elsewhere, 'secret.key')), 'no useless key file is left behind');

    const key = readFileSync(join(dataDir, 'secret.key'), 'utf8').trim();
    const runtime = await openRuntime(configFor(elsewhere, { TOLLGATE_SECRET_KEY: key }), { useSimulator: false });
    try {
      assert.equal(runtime.dependencies.secrets.open(stored.bot), PLAIN.botToken);
    } finally {
      await runtime.close();
    }
  });

  test('rotation keeps everything openable, the old key becomes previous, new seals carry the new key id', async () => {
    const oldKey = parseMasterKey(readFileSync(join(dataDir, 'secret.key'), 'utf8'), 'secret.key');
    const oldKeyId = new SecretBox(oldKey).keyId;
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'secrets', 'rotate'], { env: { ...process.env, DATA_DIR: dataDir, TOLLGATE_LOG_LEVEL: 'silent' } });
    const report = JSON.parse(stdout.slice(0, stdout.lastIndexOf('}') + 1)) as { previousKeyId: string; keyId: string; resealed: { fromPreviousKey: number } };
    assert.equal(report.previousKeyId, oldKeyId);
    assert.notEqual(report.keyId, oldKeyId);
    assert.equal(report.resealed.fromPreviousKey, 3);
    assert.deepEqual(parseMasterKey(readFileSync(join(dataDir, 'secret.key.previous'), 'utf8'), 'previous'), oldKey);
    assert.equal(mode(join(dataDir, 'secret.key')), 0o600);
    assert.equal(mode(join(dataDir, 'secret.key.previous')), 0o600);

    const stored = storedSecrets(databasePath);
    for (const sealed of [stored.bot, stored.task, stored.provider]) assert.match(sealed, new RegExp(`^v1\\.${report.keyId}\\.`));
    const runtime = await openRuntime(configFor(dataDir), { useSimulator: false });
    try {
      const box = runtime.dependencies.secrets;
      assert.equal(box.keyId, report.keyId);
      assert.equal(box.open(stored.bot), PLAIN.botToken);
      assert.equal(box.open(stored.task), PLAIN.webhookKey);
      assert.equal(box.open(stored.provider), PLAIN.providerKey);
      assert.match(box.seal('new'), new RegExp(`^v1\\.${report.keyId}\\.`));
      assert.equal(box.open(new SecretBox(oldKey).seal('sealed before')), 'sealed before', 'values under the previous key still open');
    } finally {
      await runtime.close();
    }
  });

  test('a master key in the environment must be 32 bytes: a clear error otherwise', () => {
    assert.throws(() => parseMasterKey('too-short', 'TOLLGATE_SECRET_KEY'), /TOLLGATE_SECRET_KEY: must be 32 bytes/);
    assert.equal(parseMasterKey('ab'.repeat(32), 'x').length, 32);
    assert.equal(parseMasterKey(randomBytes(32).toString('base64'), 'x').length, 32);
  });
});
