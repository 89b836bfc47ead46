import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonClient } from './json-client.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A gateway running as a real operating-system process, as an operator runs it (for signals, kill -9 and database faults). */
export interface GatewayProcess {
  url: string;
  adminToken: string;
  dataDir: string;
  /** The process that was started (`npm` for `npm start`, else node itself). */
  child: ChildProcess;
  /** Everything it printed. */
  output: string[];
  /** Resolves when the started process exits. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Pids of the started process and every process below it (node under npm under sh). */
  tree(): number[];
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
}

export interface SpawnOptions {
  /** `node`: node runs src/main.ts through tsx; `npm-start`: exactly `npm start`, as the README says. */
  command?: 'node' | 'npm-start';
  env?: Record<string, string>;
  dataDir?: string;
  adminToken?: string;
}

export async function spawnGateway(options: SpawnOptions = {}): Promise<GatewayProcess> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'tollgate-process-'));
  const adminToken = options.adminToken ?? `admin-${randomBytes(16).toString('hex')}`;
  const env = {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    TOLLGATE_ADMIN_TOKEN: adminToken,
    TOLLGATE_LOG_LEVEL: 'warn',
    TOLLGATE_ALLOW_PRIVATE_URLS: 'true',
    ...options.env,
  };
  const child =
    options.command === 'npm-start'
      ? spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => child.once('exit', (code, signal) => done({ code, signal })));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`gateway did not start within 60 s:\n${output.join('')}`)), 60_000);
    const read = (chunk: Buffer): void => {
      output.push(chunk.toString('utf8'));
      const match = /tollgate listening on (http:\/\/[^\s)]+)/.exec(output.join(''));
      if (match) {
        clearTimeout(timer);
        done(match[1]!);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(new Error(`gateway exited (${code ?? signal}) before listening:\n${output.join('')}`));
    });
  });
  const admin = jsonClient(`${url}/admin/v1`, adminToken);
  return { url, adminToken, dataDir, child, output, exited, tree: () => processTree(child.pid!), admin };
}

/** The pid and all its descendants, read from /proc. */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const children = parents.get(parent) ?? [];
      children.push(Number(name));
      parents.set(parent, children);
    } catch {
      // The process ended while we looked.
    }
  }
  const all: number[] = [];
  const visit = (pid: number): void => {
    all.push(pid);
    for (const child of parents.get(pid) ?? []) visit(child);
  };
  visit(root);
  return all;
}

export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** One answered call: what a client saw. */
export interface Answer {
  status: number;
  requestId: string;
  /** total_cost as the client saw it (currency units, 6 decimals), for 200s. */
  cost: number;
}

const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'a charge that must not be lost' }] });

/** One chat completion; a connection error counts as status 0 (the call was not answered). */
export async function chatOnce(url: string, key: string): Promise<Answer> {
  try {
    const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: CHAT });
    const body = (await response.json()) as { usage?: { total_cost?: number } };
    return { status: response.status, requestId: response.headers.get('x-request-id') ?? '', cost: body.usage?.total_cost ?? 0 };
  } catch {
    return { status: 0, requestId: '', cost: 0 };
  }
}

/**
 * Sends calls at about `ratePerSecond` (at most `concurrency` at once) until `stop()` is called; resolves with every answer.
 * Pacing is by a start schedule, not a sleep per call, so slow answers do not lower the rate below what was asked.
 */
export function loadAt(url: string, key: string, ratePerSecond: number, concurrency = 32): { stop(): void; answers: Promise<Answer[]>; served(): number } {
  let stopped = false;
  const answers: Answer[] = [];
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / ratePerSecond;
  const run = async (): Promise<Answer[]> => {
    const started = performance.now();
    for (let index = 0; !stopped; index += 1) {
      const due = started + index * interval;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
      if (stopped) break;
      while (inFlight.size >= concurrency) await Promise.race(inFlight);
      const call: Promise<void> = chatOnce(url, key).then((answer) => {
        answers.push(answer);
        inFlight.delete(call);
      });
      inFlight.add(call);
    }
    await Promise.all(inFlight);
    return answers;
  };
  return { stop: () => void (stopped = true), answers: run(), served: () => answers.filter((answer) => answer.status === 200).length };
}

/** Decimal text or a usage number → integer micro-units. */
export const microsOf = (value: string | number): bigint => {
  const text = typeof value === 'number' ? value.toFixed(6) : value;
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace('-', '').split('.');
  const amount = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return negative ? -amount : amount;
};

/** Waits until the load has had `count` calls answered 200 (a shared machine may be slow: count calls, not seconds). */
export async function untilServed(load: { served(): number }, count: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (load.served() < count) {
    if (Date.now() > deadline) throw new Error(`only ${load.served()} calls answered within ${timeoutMs} ms`);
    await new Promise((done) => setTimeout(done, 50));
  }
}
