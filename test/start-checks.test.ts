import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const BIN = join(import.meta.dirname, '..', 'bin', 'tollgate.js');

/** Runs `tollgate serve` in `cwd` until it exits; the tests here expect it to refuse to start. */
function serve(cwd: string, environment: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [BIN, 'serve'], { cwd, env: { ...inherited, TOLLGATE_LOG_LEVEL: 'silent', ...environment }, timeout: 30_000 }, (_error, _stdout, stderr) =>
      resolve({ code: child.exitCode, stderr }),
    );
  });
}

for (const url of ['mysql://x', 'file.db', 'postgres:/missing-slashes', 'sqlite:']) {
  test(`DATABASE_URL=${url} is refused with a clear message before anything is created`, async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'tollgate-start-'));
    try {
      const dataDir = join(cwd, 'data');
      const { code, stderr } = await serve(cwd, { DATA_DIR: dataDir, DATABASE_URL: url, PORT: '0' });
      assert.equal(code, 1);
      assert.match(stderr, /DATABASE_URL: must start with 'sqlite:'.*'postgres:\/\/'/);
      assert.doesNotMatch(stderr, /\n\s+at /, 'an operator mistake is a message, not a stack trace');
      assert.deepEqual(readdirSync(cwd), [], 'no file or directory was created');
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
}

test('a busy port exits 1 before the first start writes a data directory, demo user or key', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-start-'));
  const occupant = createServer();
  await new Promise<void>((resolve) => occupant.listen(0, '127.0.0.1', resolve));
  const { port } = occupant.address() as { port: number };
  try {
    const dataDir = join(cwd, 'data');
    const { code, stderr } = await serve(cwd, { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port) });
    assert.equal(code, 1);
    assert.match(stderr, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
    assert.equal(existsSync(dataDir), false, 'the data directory was not created');
    assert.deepEqual(readdirSync(cwd), []);
  } finally {
    occupant.close();
    rmSync(cwd, { recursive: true, force: true });
  }
});
