import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * How often the worker copies the log back. Each copy that catches up lets the gateway's next commit start the log over,
 * and that commit syncs the log's new header (~1–3 ms here): once a second costs the event loop ~0.2 % at saturation.
 * Copying whenever the log passed 4 MB, checked every 100 ms, restarted it ~8 times a second (the file keeps its size).
 */
const CHECKPOINT_EVERY_MS = 1_000;
/**
 * The worker costs ~10 MB of RSS (its own V8 isolate), so a gateway starts it only once it writes: when its log first
 * holds 4 MB (looked at every 2 s). Until then, and if it never does, its own connection checkpoints as before.
 */
const START_FROM_BYTES = 4 * 1024 * 1024;
const LOOK_EVERY_MS = 2_000;

/**
 * The worker's code, evaluated as CommonJS (the gateway is one bundled file, so the worker has no file of its own). It
 * opens the database a second time and every CHECKPOINT_EVERY_MS runs a PASSIVE checkpoint: it copies the committed pages
 * into the database file and syncs it (nothing, when nothing was written), never waiting for and never blocking the
 * gateway's own connection, which keeps writing meanwhile. Failures are reported, not fatal: the gateway's connection
 * still checkpoints on its own past its (higher) automatic threshold.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.path, { fileMustExist: true });
} catch (error) {
  parentPort.postMessage({ type: 'failed', message: String((error && error.message) || error) });
  process.exit(1);
}
let failing = false;
const look = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    if (failing) parentPort.postMessage({ type: 'recovered' });
    failing = false;
  } catch (error) {
    if (!failing) parentPort.postMessage({ type: 'failed', message: String(error && error.message || error) });
    failing = true;
  }
};
const timer = setInterval(look, workerData.everyMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerEvents {
  /** A checkpoint failed (the next ones are tried; `recovered` tells when one works again). */
  failed(message: string): void;
  recovered(): void;
}

/**
 * Copies SQLite's write-ahead log back into the database file from a worker thread (issue 16). Left to the gateway's own
 * connection, the copy runs inside whichever commit crosses the log's threshold and holds the event loop for it: ~80 ms
 * every 3–6 s at saturation here (two fsyncs of 12–27 ms and 32 MB of pages copied), every request in flight waiting.
 * In the worker only its own thread waits. Once it runs, the gateway's connection keeps a higher threshold of its own as a
 * backstop (database.ts), reached only if the worker falls behind or fails.
 */
export class WalCheckpointer {
  private worker: { thread: Worker; exited: Promise<void> } | undefined;
  private readonly timer: NodeJS.Timeout;

  /**
   * Watches the log of the database file at `path`, and starts the worker once it holds START_FROM_BYTES; `started` runs
   * then (the gateway's connection raises its own threshold to a backstop), `events` hears of the worker's failures.
   */
  constructor(
    private readonly path: string,
    private readonly events: CheckpointerEvents,
    private readonly started: () => void,
    options: { startFromBytes?: number; lookEveryMs?: number } = {},
  ) {
    const startFrom = options.startFromBytes ?? START_FROM_BYTES;
    this.timer = setInterval(() => {
      if ((statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0) < startFrom) return;
      clearInterval(this.timer);
      this.start();
    }, options.lookEveryMs ?? LOOK_EVERY_MS);
    this.timer.unref();
  }

  /** Whether the worker runs (the log reached the size that starts it). */
  get running(): boolean {
    return this.worker !== undefined;
  }

  private start(): void {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    // No inherited node flags: the source is CommonJS whatever the gateway was started with (`--input-type=module` made it ESM).
    const thread = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { path: this.path, driver, everyMs: CHECKPOINT_EVERY_MS } });
    thread.on('message', (message: { type: string; message?: string }) => {
      if (message.type === 'failed') this.events.failed(message.message ?? 'unknown error');
      else if (message.type === 'recovered') this.events.recovered();
    });
    thread.on('error', (error: unknown) => this.events.failed(error instanceof Error && error.message ? error.message : String(error)));
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    // A worker left running must not keep the process alive.
    thread.unref();
    this.worker = { thread, exited };
    this.started();
  }

  /** Stops watching, and the worker if it runs (before the gateway's own connection closes, which checkpoints a last time). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    const worker = this.worker;
    if (!worker) return;
    worker.thread.postMessage('stop');
    const timeout = setTimeout(() => void worker.thread.terminate(), 2_000);
    await worker.exited;
    clearTimeout(timeout);
  }
}
