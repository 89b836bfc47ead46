import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSimulator } from '../simulator/server.ts';
import { openStorage } from '../src/storage/database.ts';
import { SqlLedgerRepository } from '../src/storage/ledger-repository.ts';
import { freePort, waitForOutput } from './helpers/processes.ts';

const ROOT = join(import.meta.dirname, '..');

/** Whether anything accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Every process below `pid` (npm → sh → node, or npm → node after `exec`). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const walk = (id: number): void => {
    for (const child of children.get(id) ?? []) {
      found.push(child);
      walk(child);
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to npm start stops the gateway: the request in flight is answered, its charge written, no node left`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-signals-'));
    const simulator = await startSimulator();
    const port = await freePort();
    const { DATABASE_URL: _ignored, ...environment } = process.env;
    const npm = spawn('npm', ['start'], {
      cwd: ROOT,
      env: {
        ...environment,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        OPENAI_API_KEY: 'sim-openai',
        OPENAI_BASE_URL: `${simulator.url}/v1`,
        ANTHROPIC_API_KEY: 'sim-anthropic',
        ANTHROPIC_BASE_URL: simulator.url,
        TOLLGATE_LOG_LEVEL: 'warn',
        // Only the shutdown flush can write the charge within this test.
        TOLLGATE_LEDGER_FLUSH_MS: '600000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      await waitForOutput(npm, /tollgate listening on \S+/);
      const processes = descendants(npm.pid!);
      assert.ok(processes.length > 0, 'npm start runs the gateway in a child process');
      const key = readFileSync(join(dataDir, 'demo-key'), 'utf8').trim();

      simulator.options.latencyMs = 700;
      const inFlight = fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: key, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] }),
      });
      while (!simulator.lastRequest('/v1/chat/completions')) await sleep(10);
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.once('exit', (code, signal) => resolve({ code, signal })));
      npm.kill(signal);

      const response = await inFlight;
      assert.equal(response.status, 200, 'the request in flight is answered');
      const cost = ((await response.json()) as { usage: { total_cost: number } }).usage.total_cost;
      assert.ok(cost > 0);
      assert.deepEqual(await exited, { code: 0, signal: null }, 'npm start exits cleanly');
      for (const pid of processes) assert.equal(alive(pid), false, `process ${pid} outlived npm start`);
      assert.equal(await listening(port), false, 'nothing listens on the port any more');

      const storage = await openStorage(`sqlite:${join(dataDir, 'tollgate.db')}`);
      try {
        const demo = await storage.db.selectFrom('users').select('id').where('name', '=', 'demo').executeTakeFirstOrThrow();
        const ledger = new SqlLedgerRepository(storage.db);
        const balance = await ledger.balance({ type: 'user', id: demo.id });
        assert.equal(balance, 10_000_000_000n - BigInt(Math.round(cost * 1e9)), 'the charge was written on the way out');
        assert.equal(await ledger.sum({ type: 'user', id: demo.id }), balance);
      } finally {
        await storage.close();
      }
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      for (const pid of descendants(npm.pid!)) process.kill(pid, 'SIGKILL');
      await simulator.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
}
