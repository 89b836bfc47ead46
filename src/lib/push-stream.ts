/**
 * Streams that push: the source calls its sink as each value arrives, where an async iterator makes its reader ask for each
 * one. A streamed call's pieces go from undici's handler through the SSE parser, the vendor's decoder and the dialect's
 * relay to the client's socket in one synchronous call per piece, instead of a promise, an iterator result and a
 * generator resumption at each of five async layers (issue 16: that chain was ~40 % of what a held stream allocated,
 * and most of what it promoted to the old generation).
 */

/** Where a push stream's values go: any number of `next`, then exactly one of `end` or `fail`, then nothing. */
export interface Sink<T> {
  next(value: T): void;
  end(): void;
  fail(error: unknown): void;
}

/**
 * A stream that pushes its values into the sink it is started with. `pause` asks it to stop pushing (back-pressure: a
 * value already under way may still come), `resume` to go on. `close` stops it early, started or not: its upstream is
 * released and the sink hears nothing more; it resolves when the source's own cleanup is done (a relay's charge, what
 * is stored after it) and rejects if that failed. Started once; `close` is idempotent.
 */
export interface PushSource<T> {
  start(sink: Sink<T>): void;
  pause(): void;
  resume(): void;
  close(): Promise<void>;
}

/** Values waiting for a slow reader above which the source is paused (`pulled`). */
const QUEUED_HIGH = 16;
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

/**
 * A push source read by async iteration, for the readers that are not on a request's hot path (an assistant's turn, the
 * chat bot, tests). Values the reader has not asked for yet are queued, the source paused while more than QUEUED_HIGH
 * wait; a failure reaches the reader after the values before it. Leaving the loop early (`return`) closes the source,
 * and a read still waiting then ends.
 */
export function pulled<T>(source: PushSource<T>): AsyncIterableIterator<T> {
  const queue: T[] = [];
  let ended = false;
  let failed = false;
  let failure: unknown;
  let paused = false;
  let started = false;
  let waiting: { resolve: (result: IteratorResult<T>) => void; reject: (error: unknown) => void } | undefined;
  const sink: Sink<T> = {
    next(value) {
      if (waiting) {
        const { resolve } = waiting;
        waiting = undefined;
        resolve({ done: false, value });
        return;
      }
      queue.push(value);
      if (queue.length > QUEUED_HIGH && !paused) {
        paused = true;
        source.pause();
      }
    },
    end() {
      ended = true;
      const reader = waiting;
      waiting = undefined;
      reader?.resolve(DONE);
    },
    fail(error) {
      failed = true;
      failure = error;
      const reader = waiting;
      waiting = undefined;
      reader?.reject(error);
    },
  };
  const iterator: AsyncIterableIterator<T> = {
    next() {
      if (!started) {
        started = true;
        source.start(sink);
      }
      if (queue.length > 0) {
        const value = queue.shift()!;
        if (paused && queue.length <= QUEUED_HIGH / 2) {
          paused = false;
          source.resume();
        }
        return Promise.resolve({ done: false, value });
      }
      if (failed) return Promise.reject(failure);
      if (ended) return Promise.resolve(DONE);
      return new Promise((resolve, reject) => {
        waiting = { resolve, reject };
      });
    },
    async return() {
      ended = true;
      queue.length = 0;
      // A read waiting (close() from elsewhere while the reader awaits) ends now: the source will push nothing more.
      const reader = waiting;
      waiting = undefined;
      reader?.resolve(DONE);
      await source.close();
      return DONE;
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/**
 * An async iterable as a push source (an assistant's turn, whose frames come from awaited work): a loop pulls from it
 * while the source is not paused. `close` returns the iterator (its `finally` blocks run) and stops the loop.
 */
export function pushed<T>(values: AsyncIterable<T>): PushSource<T> {
  const iterator = values[Symbol.asyncIterator]();
  let sink: Sink<T> | undefined;
  let closed = false;
  let paused = false;
  let pumping = false;
  const pump = async (): Promise<void> => {
    pumping = true;
    try {
      while (!closed && !paused) {
        const result = await iterator.next();
        if (closed) return;
        if (result.done) {
          closed = true;
          sink!.end();
          return;
        }
        sink!.next(result.value);
      }
    } catch (error) {
      if (closed) return;
      closed = true;
      sink!.fail(error);
    } finally {
      pumping = false;
    }
  };
  return {
    start(target) {
      if (sink) throw new Error('A push source can be started only once.');
      sink = target;
      void pump();
    },
    pause() {
      paused = true;
    },
    resume() {
      if (!paused) return;
      paused = false;
      if (!pumping && !closed && sink) void pump();
    },
    async close() {
      if (closed) return;
      closed = true;
      // The iterator may be waiting on its own work (a generator suspended at an await): `return` then waits behind it.
      await iterator.return?.();
    },
  };
}
