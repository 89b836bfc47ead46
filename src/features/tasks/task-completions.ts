import { EventEmitter } from 'node:events';
import type { CallSignal } from '../../lib/call-abort.ts';

export interface WaitOptions {
  /** Longest wait (wall-clock milliseconds: it bounds how long a client's request is held). */
  timeoutMs: number;
  /** How often `finished` re-reads the store: the task may be run by another process, whose notice this one never hears. */
  pollMs: number;
  /** Whether the task is finished, from the store. */
  finished: () => Promise<boolean>;
  /** Stops waiting early (the client went away). */
  signal?: CallSignal;
}

/**
 * In-process notices that a task finished, keyed by task id: the task worker announces, a request waiting for its own task
 * (POST /v1/media/generate) listens, with a re-read of the store as the fallback for tasks finished elsewhere.
 */
export class TaskCompletions {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per waiting request; many may wait at once.
    this.emitter.setMaxListeners(0);
  }

  /** Called by the worker once a task is settled (done or failed) in the store. */
  finished(taskId: string): void {
    this.emitter.emit(taskId);
  }

  /** Resolves when the task is finished, the time is up, or the signal fires — whichever comes first; never rejects. */
  waitFor(taskId: string, options: WaitOptions): Promise<void> {
    return new Promise<void>((resolve) => {
      let settled = false;
      let poller: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(poller);
        this.emitter.off(taskId, done);
        options.signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, options.timeoutMs);
      this.emitter.on(taskId, done);
      options.signal?.addEventListener('abort', done, { once: true });
      if (options.signal?.aborted) return done();
      // The first read comes at once: the task may have finished before this listener was added.
      const poll = async (): Promise<void> => {
        const finished = await options.finished().catch(() => false);
        if (finished) done();
        else if (!settled) poller = setTimeout(() => void poll(), options.pollMs);
      };
      void poll();
    });
  }
}
