import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlStoreAnswer, SqlStoreMessage, SqlStoreRequest } from './sql-store-protocol.ts';

/** The worker's source: beside this module when run from `src/` (tsx), or under `src/` when bundled into `dist/main.js`. */
function findWorkerFile(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'sql-store-worker.ts'), resolve(here, '..', 'src', 'features', 'assistants', 'tools', 'sql-store-worker.ts')];
  return candidates.find((candidate) => existsSync(candidate)) ?? join(here, 'sql-store-worker.ts');
}
let workerFile: string | undefined;
/**
 * The worker is TypeScript, so it runs with tsx's loader — named by its resolved URL, because the bundled gateway and
 * `bin/tollgate.js` have no `--import tsx` to pass on, and a bare `tsx` would resolve from the working directory.
 */
const TSX_LOADER = import.meta.resolve('tsx');
/** Starting takes ~0.2 s (Node, tsx, better-sqlite3); this bound is for a loaded machine. */
const START_TIMEOUT_MS = 15_000;
/** How long a closed process may take to close its database before it is killed. */
const CLOSE_GRACE_MS = 2_000;
/** The JavaScript heap of the child; rows are bounded long before this. */
const CHILD_HEAP_MB = 128;

const isMessage = (value: unknown): value is SqlStoreMessage => typeof value === 'object' && value !== null && 'kind' in value;

/** Only what Node needs: the gateway's own secrets stay out of the child. */
function childEnvironment(): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const name of ['PATH', 'TMPDIR', 'TMP', 'TEMP', 'SYSTEMROOT']) if (process.env[name] !== undefined) environment[name] = process.env[name];
  return environment;
}

/**
 * One assistant's SQLite file behind a child process (sql-store-worker.ts), started on the first statement. Statements
 * run one at a time; one that outlasts its time limit is stopped by killing the process, and the next statement starts
 * a new one (SQLite's journal undoes the half-done write on opening).
 */
export class SqlStoreProcess {
  private child: ChildProcess | undefined;
  private starting: Promise<ChildProcess> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private nextId = 1;

  constructor(
    private readonly path: string,
    private readonly limitBytes: number,
  ) {}

  /** Runs one statement; never rejects for a failing statement (its error is an answer). */
  run(sql: string, timeoutMs: number, signal: AbortSignal): Promise<SqlStoreAnswer> {
    const result = this.queue.then(() => this.runNow(sql, timeoutMs, signal));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Closes the channel (the child closes its database and exits), killing it if it does not exit in time. */
  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.starting = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  private async runNow(sql: string, timeoutMs: number, signal: AbortSignal): Promise<SqlStoreAnswer> {
    if (signal.aborted) return { kind: 'error', message: 'the chat was cancelled' };
    const child = await this.start();
    const request: SqlStoreRequest = { id: this.nextId++, sql };
    return new Promise<SqlStoreAnswer>((resolve) => {
      let done = false;
      const finish = (answer: SqlStoreAnswer): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        signal.removeEventListener('abort', onAbort);
        resolve(answer);
      };
      const onMessage = (message: unknown): void => {
        if (isMessage(message) && message.kind === 'answer' && message.id === request.id) finish(message.answer);
      };
      const onExit = (): void => {
        this.forget(child);
        finish({ kind: 'error', message: 'the SQL store stopped while running the statement' });
      };
      const onAbort = (): void => {
        this.kill(child);
        finish({ kind: 'error', message: 'the chat was cancelled' });
      };
      const timer = setTimeout(() => {
        this.kill(child);
        finish({ kind: 'error', message: `the statement did not finish within ${timeoutMs / 1000} s and was stopped` });
      }, timeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      signal.addEventListener('abort', onAbort, { once: true });
      child.send(request, (error) => {
        if (error) finish({ kind: 'error', message: `the SQL store could not be reached: ${error.message}` });
      });
    });
  }

  private start(): Promise<ChildProcess> {
    if (this.child && this.child.connected) return Promise.resolve(this.child);
    this.starting ??= this.spawn().catch((error: unknown) => {
      this.starting = undefined;
      throw error;
    });
    return this.starting;
  }

  private spawn(): Promise<ChildProcess> {
    return new Promise<ChildProcess>((resolve, reject) => {
      workerFile ??= findWorkerFile();
      const child = fork(workerFile, [this.path, String(this.limitBytes)], {
        execArgv: ['--import', TSX_LOADER, `--max-old-space-size=${CHILD_HEAP_MB}`],
        env: childEnvironment(),
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        serialization: 'json',
      });
      this.child = child;
      // Errors after start (a failed kill or send) only mean the process is gone; without a listener they would throw.
      child.on('error', () => this.forget(child));
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString('utf8')).slice(-2_000);
      });
      const settle = (error: Error | undefined): void => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        child.off('error', settle);
        if (!error) return resolve(child);
        this.kill(child);
        reject(error);
      };
      const onMessage = (message: unknown): void => {
        if (!isMessage(message)) return;
        if (message.kind === 'ready') settle(undefined);
        else if (message.kind === 'failed') settle(new Error(`the SQL store could not open its database: ${message.message}`));
      };
      const onExit = (code: number | null): void => {
        const detail = stderr.trim().split('\n').at(-1);
        settle(new Error(`the SQL store failed to start (exit ${code ?? 'by signal'})${detail ? `: ${detail}` : ''}`));
      };
      const timer = setTimeout(() => settle(new Error('the SQL store did not start in time')), START_TIMEOUT_MS);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.once('error', settle);
    });
  }

  private kill(child: ChildProcess): void {
    this.forget(child);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }

  private forget(child: ChildProcess): void {
    if (this.child !== child) return;
    this.child = undefined;
    this.starting = undefined;
  }
}
