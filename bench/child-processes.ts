// The benchmark's child processes (simulator, gateways): started on free ports, awaited until they answer, and always
// stopped — at the end, on error, on SIGINT/SIGTERM, and with SIGKILL from the exit hook if anything is still alive.

import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

const OUTPUT_TAIL_BYTES = 8_192;

export interface Child {
  name: string;
  pid: number;
  /** The last few kilobytes of its stdout and stderr, for error messages. */
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has exited. */
  exited: Promise<number | string>;
  hasExited(): boolean;
}

const running = new Map<number, ChildProcess>();
const temporaryDirectories = new Set<string>();

/** A directory removed when this process exits, however it exits (the caller may remove it earlier with `forget`). */
export function removeOnExit(path: string): { forget(): void } {
  temporaryDirectories.add(path);
  return { forget: () => temporaryDirectories.delete(path) };
}

/** A port the kernel just handed out on 127.0.0.1 and released again. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('could not read a free port');
  return address.port;
}

/** Environment for a child: only what a Node process needs, plus the variables given (nothing inherited by accident). */
export function childEnvironment(variables: Record<string, string>): NodeJS.ProcessEnv {
  const inherited: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) inherited[name] = value;
  }
  return { ...inherited, ...variables };
}

export function startChild(name: string, args: readonly string[], environment: NodeJS.ProcessEnv, cwd: string): Child {
  const child = spawn(process.execPath, args, { cwd, env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  if (child.pid === undefined) throw new Error(`${name}: could not start`);
  const pid = child.pid;
  running.set(pid, child);
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL_BYTES);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited = false;
  const exitPromise = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      running.delete(pid);
      resolve(code ?? signal ?? 'unknown');
    });
  });
  return { name, pid, output: () => tail, exited: exitPromise, hasExited: () => exited };
}

/** Polls `url` until it answers 2xx; fails early if the child exits, or after `timeoutMs`. */
export async function waitUntilAnswering(child: Child, url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.hasExited()) throw new Error(`${child.name} exited (${await child.exited}) before answering ${url}:\n${child.output()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.output()}`);
}

/** SIGTERM (the gateway flushes its ledger), then SIGKILL after `graceMs`. */
export async function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  if (child.hasExited()) return;
  running.get(child.pid)?.kill('SIGTERM');
  const timer = sleep(graceMs).then(() => 'late' as const);
  if ((await Promise.race([child.exited, timer])) === 'late') {
    running.get(child.pid)?.kill('SIGKILL');
    await child.exited;
  }
}

/** Stops every child still running: SIGTERM, then SIGKILL after five seconds. */
export async function stopEverything(): Promise<void> {
  await Promise.all(
    [...running.values()].map(async (child) => {
      child.kill('SIGTERM');
      await Promise.race([new Promise((resolve) => child.once('exit', resolve)), sleep(5_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }),
  );
}

/** Children are stopped whatever way this process ends. */
export function installExitHandlers(): void {
  process.once('exit', () => {
    for (const child of running.values()) child.kill('SIGKILL');
    for (const path of temporaryDirectories) rmSync(path, { recursive: true, force: true });
  });
  const interrupt = (signal: NodeJS.Signals): void => {
    console.error(`\n${signal}: stopping the benchmark's processes`);
    void stopEverything().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
}

