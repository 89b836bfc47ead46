// When the gateway hands its heap back with a full collection (src/lib/idle-gc.ts): only once traffic has paused or fallen,
// never under steady load, and never twice for the same heap.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { HeapReturner, startIdleCollector } from '../src/lib/idle-gc.ts';

const MB = 2 ** 20;
const execNode = promisify(execFile);

/** Feeds ticks of [requests answered in the tick, heap MB] and returns the ticks (1-based) that collected. */
function run(ticks: readonly (readonly [number, number])[], quietTicks = 5): number[] {
  const returner = new HeapReturner(0, 40 * MB, quietTicks);
  let requests = 0;
  const collectedAt: number[] = [];
  ticks.forEach(([answered, heapMb], index) => {
    requests += answered;
    if (returner.tick(requests, heapMb * MB)) {
      collectedAt.push(index + 1);
      returner.collected(requests, 45 * MB);
    }
  });
  return collectedAt;
}

test('steady load never collects, however large the heap grows', () => {
  const ticks = Array.from({ length: 60 }, (_, index) => [12_000 + ((index * 7919) % 3_000), 40 + index * 3] as const);
  assert.deepEqual(run(ticks), []);
});

test('load that falls to a quarter of its busiest second, with the heap grown half again, collects once', () => {
  const busy = Array.from({ length: 10 }, () => [12_000, 160] as const);
  const trickle = Array.from({ length: 10 }, () => [900, 170] as const);
  assert.deepEqual(run([...busy, ...trickle]), [11]);
});

test('a dip to a third of the busiest second is still load: no collection', () => {
  assert.deepEqual(run([[9_000, 160], [9_000, 160], [3_000, 160], [9_000, 160], [3_100, 160]]), []);
});

test('falling load with a heap that has not grown since the last collection: no collection', () => {
  assert.deepEqual(run([[5_000, 50], [5_000, 55], [100, 55], [100, 55]]), []);
});

test('the heap grown again after a collection, and the load falling again, collects again', () => {
  const first = [[10_000, 160], [10_000, 160], [500, 160]] as const;
  const second = [[10_000, 120], [10_000, 150], [400, 150]] as const;
  assert.deepEqual(run([...first, ...second]), [3, 6]);
});

test('a pause collects after five quiet ticks, once; a process that has answered nothing never collects', () => {
  assert.deepEqual(run([[20, 41], [0, 41], [0, 41], [0, 41], [0, 41], [0, 41], [0, 41], [0, 41], [0, 41]]), [6]);
  assert.deepEqual(run(Array.from({ length: 20 }, () => [0, 41] as const)), []);
});

test('the timer runs the collection through --expose-gc\'s gc(), then the malloc trim, once a pause, and stops when told', { timeout: 5_000 }, async () => {
  const exposed = globalThis as { gc?: () => void };
  const original = exposed.gc;
  const calls: string[] = [];
  const collections = (): number => calls.filter((call) => call === 'gc').length;
  exposed.gc = () => {
    calls.push('gc');
  };
  const activity = { started: 0, requests: 0 };
  const stop = startIdleCollector(activity, 5, 3, () => {
    calls.push('trim');
    return true;
  });
  try {
    await sleep(60);
    assert.equal(collections(), 0, 'nothing answered yet');
    activity.started += 10;
    activity.requests += 10;
    while (collections() === 0) await sleep(5);
    await sleep(60);
    assert.deepEqual(calls, ['gc', 'trim'], 'one collection for one pause, the C heap trimmed after it');
    stop();
    activity.started += 10;
    activity.requests += 10;
    await sleep(60);
    assert.equal(collections(), 1, 'stopped');
  } finally {
    stop();
    exposed.gc = original;
  }
});

test('the collection compacts the heap only when no request is in flight', { timeout: 5_000 }, async () => {
  const exposed = globalThis as { gc?: () => void };
  const original = exposed.gc;
  exposed.gc = () => {};
  const compacted: boolean[] = [];
  const activity = { started: 0, requests: 0 };
  const stop = startIdleCollector(activity, 5, 3, undefined, (collect, compact) => {
    compacted.push(compact);
    collect();
  });
  try {
    // Eleven begun, ten answered: a stream is still open when traffic pauses.
    activity.started = 11;
    activity.requests = 10;
    while (compacted.length === 0) await sleep(5);
    assert.deepEqual(compacted, [false], 'a stream in flight: a plain collection');
    activity.requests = 11;
    while (compacted.length === 1) await sleep(5);
    assert.deepEqual(compacted, [false, true], 'the stream answered and nothing else begun: the next pause compacts');
  } finally {
    stop();
    exposed.gc = original;
  }
});

test('the collection hands a heap of garbage back to the system on this node', { timeout: 30_000 }, async () => {
  // A child process of this runtime (the suite runs on the machine's node, and in CI on the container's too): it grows its
  // old space by ~150 MB of objects that outlive scavenges, lets them go, and calls what the idle collector calls.
  const child = `
    import { handBackMemory } from ${JSON.stringify(new URL('../src/lib/idle-gc.ts', import.meta.url).href)};
    const rss = () => process.memoryUsage().rss;
    gc();
    const before = rss();
    let kept = [];
    for (let i = 0; i < 1_200_000; i++) kept.push({ text: 'item ' + i, list: [i, i + 1], inner: { i } });
    const grown = rss();
    kept = null;
    handBackMemory(gc, false);
    let after = rss();
    for (let waited = 0; waited < 5000 && after - before > (grown - before) / 2; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = rss();
    }
    console.log(JSON.stringify({ before, grown, after }));`;
  const { stdout } = await execNode(process.execPath, ['--expose-gc', '--max-semi-space-size=8', '--import', 'tsx', '--input-type=module', '-e', child]);
  const { before, grown, after } = JSON.parse(stdout) as { before: number; grown: number; after: number };
  assert.ok(grown - before > 100 * MB, `the garbage grew RSS by ${((grown - before) / MB).toFixed(0)} MB`);
  assert.ok(after - before < (grown - before) / 2, `${process.version}: RSS ${(before / MB).toFixed(0)} MB before, ${(grown / MB).toFixed(0)} MB grown, ${(after / MB).toFixed(0)} MB after the collection`);
});

test('the compacting collection leaves the old generation in as few pages as hold what lives', { timeout: 60_000 }, async () => {
  // A heap whose live objects are spread thin: ~600,000 objects that outlive scavenges, then three of every four let go,
  // so that every page keeps a quarter of what it held. Each way in a child process of its own, on this node.
  const child = (compact: boolean): string => `
    import { getHeapStatistics } from 'node:v8';
    import { handBackMemory } from ${JSON.stringify(new URL('../src/lib/idle-gc.ts', import.meta.url).href)};
    let kept = [];
    for (let i = 0; i < 600_000; i++) kept.push({ text: 'item ' + i, list: [i, i + 1] });
    kept = kept.filter((_, i) => i % 4 === 0);
    handBackMemory(gc, ${compact});
    const { total_heap_size: committed, used_heap_size: used } = getHeapStatistics();
    console.log(JSON.stringify({ committed, used, kept: kept.length }));`;
  const heapAfter = async (compact: boolean): Promise<{ committed: number; used: number }> => {
    const { stdout } = await execNode(process.execPath, ['--expose-gc', '--max-semi-space-size=8', '--import', 'tsx', '--input-type=module', '-e', child(compact)]);
    return JSON.parse(stdout) as { committed: number; used: number };
  };
  const plain = await heapAfter(false);
  const compacted = await heapAfter(true);
  const figures = `${process.version}: committed ${(plain.committed / MB).toFixed(0)} MB for ${(plain.used / MB).toFixed(0)} MB live after a plain collection, ${(compacted.committed / MB).toFixed(0)} MB for ${(compacted.used / MB).toFixed(0)} MB compacted`;
  // Node 20's plain collection left ~100 MB committed for ~26 MB live; Node 24's last-resort collection already compacts
  // much of it by itself (35–38 MB, once 86). Compacted, both are within the young generation's 16 MB of what lives.
  assert.ok(compacted.committed - compacted.used < 20 * MB, `compacted, little is committed beyond what lives: ${figures}`);
  assert.ok(compacted.committed <= plain.committed + 2 * MB, `compacting never leaves more committed: ${figures}`);
});

test("after the collection, the trim hands back the C heap's free pages that free() keeps (glibc)", { timeout: 30_000 }, async () => {
  // npm install builds native/malloc-trim wherever a compiler is; on glibc (this machine, CI, the container) it must be there.
  const glibc = (process.report.getReport() as { header: { glibcVersionRuntime?: string } }).header.glibcVersionRuntime;
  assert.ok(glibc, 'this suite runs on glibc');
  // A child process, as the gateway runs (npm start's malloc arenas): ~100 MB of 1 KB buffers, which node takes from
  // malloc, every 64th kept so that the freed ones lie between live ones; then the idle collector, as main.ts starts it,
  // with short ticks, once a request has been answered.
  const child = `
    import { startIdleCollector } from ${JSON.stringify(new URL('../src/lib/idle-gc.ts', import.meta.url).href)};
    const rss = () => process.memoryUsage().rss;
    gc();
    const before = rss();
    const kept = [];
    let all = [];
    for (let i = 0; i < 100_000; i++) {
      const buffer = Buffer.allocUnsafeSlow(1000).fill(i & 255);
      all.push(buffer);
      if (i % 64 === 0) kept.push(buffer);
    }
    const grown = rss();
    all = null;
    gc();
    const collected = rss();
    const activity = { started: 1, requests: 0 };
    const stop = startIdleCollector(activity, 10, 2);
    activity.requests += 1;
    let after = rss();
    for (let waited = 0; waited < 5000 && after - before > (grown - before) / 2; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      after = rss();
    }
    stop();
    console.log(JSON.stringify({ before, grown, collected, after, kept: kept.length }));`;
  const { stdout } = await execNode(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', child], { env: { ...process.env, MALLOC_ARENA_MAX: '2' } });
  const { before, grown, collected, after } = JSON.parse(stdout) as { before: number; grown: number; collected: number; after: number };
  const mb = (bytes: number): string => `${(bytes / MB).toFixed(0)} MB`;
  const figures = `${process.version}, glibc ${glibc}: RSS ${mb(before)} before, ${mb(grown)} grown, ${mb(collected)} after a collection alone, ${mb(after)} after the idle collector`;
  assert.ok(grown - before > 80 * MB, `the buffers grew RSS: ${figures}`);
  assert.ok(collected - before > (grown - before) / 2, `a collection alone leaves the freed buffers' memory in the process: ${figures}`);
  assert.ok(after - before < (grown - before) / 2, `the idle collector hands most of it back: ${figures}`);
});
