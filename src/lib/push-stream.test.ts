import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import { pulled, pushed, type PushSource, type Sink } from './push-stream.ts';

/** A source the test pushes by hand; records pauses and closes. */
function manual() {
  const state = {
    sink: undefined as Sink<number> | undefined,
    paused: false,
    pauses: 0,
    closed: 0,
    start(sink: Sink<number>) {
      state.sink = sink;
    },
    pause() {
      state.paused = true;
      state.pauses += 1;
    },
    resume() {
      state.paused = false;
    },
    close() {
      state.closed += 1;
      return Promise.resolve();
    },
  } satisfies PushSource<number> & Record<string, unknown>;
  return state;
}

test('pulled: values pushed before they are asked for wait in order; the source is paused above 16 waiting and resumed once the reader catches up', async () => {
  const source = manual();
  const reader = pulled(source);
  const first = reader.next();
  assert.ok(source.sink, 'started by the first read');
  for (let value = 0; value < 40; value++) source.sink.next(value);
  source.sink.end();
  assert.equal(source.pauses, 1);
  const seen: number[] = [];
  for (let result = await first; !result.done; result = await reader.next()) seen.push(result.value);
  assert.deepEqual(
    seen,
    Array.from({ length: 40 }, (_, value) => value),
  );
  assert.equal(source.paused, false, 'resumed');
  assert.equal(source.closed, 0, 'a source that ended is not closed');
});

test('pulled: a failure reaches the reader after the values before it', async () => {
  const source = manual();
  const reader = pulled(source);
  const first = reader.next();
  source.sink!.next(1);
  source.sink!.next(2);
  source.sink!.fail(new Error('vendor cut the stream'));
  assert.deepEqual(await first, { done: false, value: 1 });
  assert.deepEqual(await reader.next(), { done: false, value: 2 });
  await assert.rejects(reader.next(), /vendor cut the stream/);
});

test('pulled: leaving the loop early closes the source, and a read that was waiting ends', async () => {
  const source = manual();
  const reader = pulled(source);
  const waiting = reader.next();
  await reader.return!();
  assert.deepEqual(await waiting, { done: true, value: undefined });
  assert.equal(source.closed, 1);
});

test('pushed: an async iterable pushed to a sink; a pause stops the pulling until resume; the end after the last value', async () => {
  let produced = 0;
  const source = pushed(
    (async function* () {
      for (let value = 0; value < 5; value++) {
        produced = value + 1;
        yield value;
      }
    })(),
  );
  const seen: number[] = [];
  let ended = false;
  source.start({
    next: (value) => {
      seen.push(value);
      if (value === 1) source.pause();
    },
    end: () => (ended = true),
    fail: (error) => assert.fail(String(error)),
  });
  for (let turn = 0; turn < 5; turn++) await setImmediate();
  assert.deepEqual(seen, [0, 1]);
  assert.equal(produced, 2, 'nothing more was pulled while paused');
  source.resume();
  for (let turn = 0; turn < 5 && !ended; turn++) await setImmediate();
  assert.deepEqual(seen, [0, 1, 2, 3, 4]);
  assert.equal(ended, true);
});

test('pushed: close returns the iterator (its finally runs) and the sink hears nothing more; a failure goes to fail', async () => {
  let cleaned = false;
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const source = pushed(
    (async function* () {
      try {
        yield 1;
        await held;
        yield 2;
      } finally {
        cleaned = true;
      }
    })(),
  );
  const seen: number[] = [];
  source.start({ next: (value) => seen.push(value), end: () => seen.push(-1), fail: () => seen.push(-2) });
  await setImmediate();
  const closing = source.close();
  release();
  await closing;
  assert.equal(cleaned, true);
  await setImmediate();
  assert.deepEqual(seen, [1]);

  const failing = pushed(
    (async function* () {
      yield 1;
      throw new Error('turn failed');
    })(),
  );
  const failure = new Promise<unknown>((resolve) => failing.start({ next: () => undefined, end: () => resolve(undefined), fail: resolve }));
  assert.match(String(await failure), /turn failed/);
});
