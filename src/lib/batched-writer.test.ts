import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { BatchedWriter } from './batched-writer.ts';
import { ManualClock } from './clock.ts';

const silent = pino({ level: 'silent' });

function writer(options: { flushMs: number; batchItems?: number; fail?: () => boolean }) {
  const batches: number[][] = [];
  let attempts = 0;
  const batched = new BatchedWriter<number>({
    name: 'test',
    itemsLabel: 'items',
    flushMs: options.flushMs,
    ...(options.batchItems === undefined ? {} : { batchItems: options.batchItems }),
    clock: new ManualClock(),
    logger: silent,
    async write(batch) {
      attempts += 1;
      if (options.fail?.()) throw new Error('database away');
      batches.push([...batch]);
    },
  });
  return { batched, batches, attempts: () => attempts };
}

test('a full batch is written at once; what follows waits for the interval', async () => {
  const { batched, batches } = writer({ flushMs: 60_000, batchItems: 3 });
  for (const item of [1, 2]) batched.push(item);
  await sleep(30);
  assert.deepEqual(batches, [], 'two of three wait for the interval');
  batched.push(3);
  await sleep(30);
  assert.deepEqual(batches, [[1, 2, 3]], 'the third fills the batch: written without waiting a minute');
  for (const item of [4, 5]) batched.push(item);
  await sleep(30);
  assert.deepEqual(batches, [[1, 2, 3]]);
  assert.equal(await batched.close(1_000), true);
  assert.deepEqual(batches, [[1, 2, 3], [4, 5]], 'close writes the rest, in order');
});

test('without batchItems only the interval counts', async () => {
  const { batched, batches } = writer({ flushMs: 20 });
  for (let item = 0; item < 1_000; item++) batched.push(item);
  assert.equal(batches.length, 0);
  await sleep(80);
  assert.equal(batches.length, 1);
  assert.equal(batches[0]!.length, 1_000);
  await batched.close(1_000);
});

test('while writes fail, a full queue waits for the back-off instead of being tried at once', async () => {
  let failing = true;
  const { batched, batches, attempts } = writer({ flushMs: 10, batchItems: 3, fail: () => failing });
  try {
    batched.push(1);
    await sleep(60);
    assert.equal(attempts(), 1, 'the first timed write failed; the next try is 250 ms later');
    batched.push(2);
    batched.push(3);
    await sleep(60);
    assert.equal(attempts(), 1, 'three queued (the failed item back in front) did not start a write');
    assert.equal(batched.health().ok, false);
    failing = false;
    await sleep(400);
    assert.deepEqual(batches, [[1, 2, 3]], 'the back-off retry wrote everything, in order');
    assert.equal(batched.health().ok, true);
  } finally {
    failing = false;
    await batched.close(1_000);
  }
});
