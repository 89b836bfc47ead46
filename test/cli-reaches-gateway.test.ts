import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { startSimulator } from '../simulator/server.ts';
import { freePort, waitForOutput } from './helpers/processes.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'tollgate.js');
/** DESIGN §3: CLI writes reach running gateways within 1 s. */
const WITHIN_MS = 1_000;

/** Polls until `check` holds; fails once `limitMs` have passed without it. */
async function eventually(check: () => Promise<boolean>, limitMs: number, what: string): Promise<void> {
  const started = Date.now();
  while (!(await check())) {
    assert.ok(Date.now() - started < limitMs, `${what} did not happen within ${limitMs} ms`);
    await sleep(25);
  }
}

test('a CLI credit and a CLI revoke on the SQLite file reach the running gateway within a second', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-cli-bus-'));
  const simulator = await startSimulator();
  const port = await freePort();
  const { DATABASE_URL: _ignored, ...inherited } = process.env;
  const env = {
    ...inherited,
    DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${join(dataDir, 'tollgate.db')}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    OPENAI_API_KEY: 'sim-openai',
    OPENAI_BASE_URL: `${simulator.url}/v1`,
    ANTHROPIC_API_KEY: 'sim-anthropic',
    ANTHROPIC_BASE_URL: simulator.url,
    TOLLGATE_LOG_LEVEL: 'silent',
  };
  const cli = async (...args: string[]): Promise<Record<string, unknown>> => JSON.parse((await run(process.execPath, [BIN, ...args], { env })).stdout) as Record<string, unknown>;
  const gateway = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await waitForOutput(gateway, /tollgate listening on/);
    const user = await cli('users', 'create', '--name', 'broke', '--balance', '0');
    const created = await cli('keys', 'create', '--user', String(user.id));
    const key = String(created.key);
    const chat = async (): Promise<number> => {
      const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      await response.arrayBuffer();
      return response.status;
    };
    // The gateway now holds the key and the empty balance in memory.
    assert.equal(await chat(), 402);

    await cli('balance', 'credit', '--user', String(user.id), '--amount', '1.00');
    await eventually(async () => (await chat()) === 200, WITHIN_MS, 'the credit reaching the gateway');

    await cli('keys', 'revoke', String(created.id));
    await eventually(async () => (await chat()) === 401, WITHIN_MS, 'the revocation reaching the gateway');
  } finally {
    gateway.kill('SIGTERM');
    await new Promise((resolve) => gateway.once('exit', resolve));
    await simulator.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
