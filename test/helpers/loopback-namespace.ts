import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Runs a program in a loopback-only network namespace (`unshare -n`, root only) where 127.0.0.1:<targetPort> reaches the
 * gateway outside through a unix socket: a client that looks up outside hosts (the Codex CLI does at start) can reach
 * nothing but the gateway, and nothing leaves the machine (DESIGN §12).
 */

const INNER = fileURLToPath(new URL('./loopback-namespace-inner.mjs', import.meta.url));

export interface NamespaceRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

export interface NamespaceOptions {
  /** The gateway's port on 127.0.0.1 outside; the program sees the same port inside. */
  targetPort: number;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  timeoutMs: number;
}

/** Why the namespace cannot be made here (not root, no `unshare` or `ip`), or undefined when it can. */
export async function loopbackNamespaceUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root for `unshare -n`';
  const probe = await runCaptured('unshare', ['-n', '--', 'ip', 'link', 'set', 'lo', 'up'], { env: process.env, cwd: tmpdir(), timeoutMs: 10_000 });
  return probe.code === 0 ? undefined : `\`unshare -n ip link set lo up\` failed (${probe.code}): ${probe.stderr.trim()}`;
}

export async function runInLoopbackNamespace(options: NamespaceOptions): Promise<NamespaceRun> {
  const directory = await mkdtemp(join(tmpdir(), 'tollgate-bridge-'));
  const socketPath = join(directory, 'gateway.sock');
  const open = new Set<Socket>();
  const forwarder = createServer((inside) => {
    const gateway = connect(options.targetPort, '127.0.0.1');
    open.add(inside).add(gateway);
    inside.pipe(gateway).pipe(inside);
    const closeBoth = (): void => {
      inside.destroy();
      gateway.destroy();
      open.delete(inside);
      open.delete(gateway);
    };
    inside.on('error', closeBoth).on('close', closeBoth);
    gateway.on('error', closeBoth).on('close', closeBoth);
  });
  await new Promise<void>((resolve) => forwarder.listen(socketPath, resolve));
  try {
    return await runCaptured('unshare', ['-n', '--', process.execPath, INNER, String(options.targetPort), socketPath, options.command, ...options.args], options);
  } finally {
    for (const socket of open) socket.destroy();
    await new Promise<void>((resolve) => forwarder.close(() => resolve()));
    await rm(directory, { recursive: true, force: true });
  }
}

/** Runs a program to its end (or kills its whole process group at the timeout) and captures its output. */
function runCaptured(command: string, args: string[], options: Pick<NamespaceOptions, 'env' | 'cwd' | 'timeoutMs'>): Promise<NamespaceRun> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => void (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, stdout, stderr: `${stderr}${error.message}`, timedOut });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut });
    });
  });
}
