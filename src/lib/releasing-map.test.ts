import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { ReleasingMap } from './releasing-map.ts';

const execNode = promisify(execFile);

test('ReleasingMap: get, has, set, delete and size as a Map; values in insertion order, a value set again keeps its place', () => {
  const map = new ReleasingMap<string, { n: number }>();
  const a = { n: 1 };
  const b = { n: 2 };
  map.set('a', a);
  map.set('b', b);
  map.set('c', { n: 3 });
  assert.equal(map.size, 3);
  assert.equal(map.get('a'), a);
  assert.equal(map.has('b'), true);
  map.set('a', { n: 4 });
  assert.deepEqual([...map.values()].map((value) => value.n), [4, 2, 3]);
  assert.equal(map.delete('b'), true);
  assert.equal(map.delete('b'), false);
  assert.equal(map.has('b'), false);
  assert.equal(map.get('b'), undefined);
  assert.equal(map.size, 2);
  assert.deepEqual([...map.values()].map((value) => value.n), [4, 3]);
  assert.equal(map.delete('missing'), false);
});

test('ReleasingMap: values deleted from a long-lived map are not promoted with the tables it leaves behind', { timeout: 30_000 }, async () => {
  // A child process of this runtime with the gateway's V8 flags: a map promoted to the old generation (as a map that lives as
  // long as the process is) takes 20,000 values of ~0.6 KB, keeping 50 at a time — a request's trace by its id, 50 requests
  // in flight. The old space's growth afterwards, past two scavenges, is what the map made survive: with a plain Map, the
  // values its replaced tables still held.
  const child = `
    import v8 from 'node:v8';
    import { ReleasingMap } from ${JSON.stringify(new URL('./releasing-map.ts', import.meta.url).href)};
    const oldUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space').space_used_size;
    function promoted(map) {
      for (let i = 0; i < 64; i++) map.set(-i - 1, {});
      gc(); gc();
      const before = oldUsed();
      for (let i = 0; i < 20_000; i++) {
        map.set(i, { payload: new Array(64).fill(i) });
        if (i >= 50) map.delete(i - 50);
        if (i % 500 === 0) gc({ type: 'minor' });
      }
      for (let i = 19_950; i < 20_000; i++) map.delete(i);
      gc({ type: 'minor' }); gc({ type: 'minor' });
      return oldUsed() - before;
    }
    console.log(JSON.stringify({ plain: promoted(new Map()), releasing: promoted(new ReleasingMap()) }));`;
  const flags = ['--expose-gc', '--max-semi-space-size=8', '--no-allocation-site-pretenuring'];
  const { stdout } = await execNode(process.execPath, [...flags, '--import', 'tsx', '--input-type=module', '-e', child]);
  const { plain, releasing } = JSON.parse(stdout) as { plain: number; releasing: number };
  const kb = (bytes: number): string => `${(bytes / 1024).toFixed(0)} KB`;
  // The values themselves are 20,000 × ~0.6 KB = ~12 MB: a Map holds on to a few MB of them, the slots keep none.
  assert.ok(plain > 2 * 2 ** 20, `${process.version}: a plain Map promoted only ${kb(plain)} — V8 no longer keeps values in replaced tables?`);
  assert.ok(releasing < plain / 3, `${process.version}: ReleasingMap promoted ${kb(releasing)}, a Map ${kb(plain)}`);
});
