import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { openStorage } from './database.ts';
import { WalCheckpointer } from './wal-checkpointer.ts';

test("with background checkpoints, committed writes reach the database file itself without the gateway's connection copying them", async () => {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-checkpoints-'));
  const failures: string[] = [];
  const path = join(directory, 'tollgate.db');
  const storage = await openStorage(`sqlite:${path}`, { backgroundCheckpoints: { failed: (message) => failures.push(message), recovered: () => undefined } });
  try {
    await sql`create table probe (n integer not null)`.execute(storage.db);
    // ~6 MB of log: past the size that starts the worker (4 MB), far below the gateway connection's own threshold
    // (8,000 pages, then 16,000), so only the worker copies it back.
    for (let batch = 0; batch < 60; batch++) {
      await storage.db.transaction().execute(async (trx) => {
        for (let row = 0; row < 100; row++) await sql`insert into probe (n) values (${batch * 100 + row})`.execute(trx);
        await sql`insert into settings (key, value) values (${`probe-${batch}`}, ${'x'.repeat(80_000)})`.execute(trx);
      });
    }
    assert.ok(statSync(`${path}-wal`).size > 5_000_000, 'the writes went to the write-ahead log');
    // Within the look that starts the worker (2 s) and a checkpoint period or two (given 20 s on a loaded machine), the
    // database file alone (copied without its log) holds every committed row.
    let rows = 0;
    for (let waited = 0; waited < 20_000 && rows !== 6_000; waited += 250) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const copy = join(directory, 'copy.db');
      copyFileSync(path, copy);
      const alone = new SqliteDatabase(copy, { readonly: true });
      try {
        rows = (alone.prepare("select count(*) as n from sqlite_master where name = 'probe'").get() as { n: number }).n === 1
          ? (alone.prepare('select count(*) as n from probe').get() as { n: number }).n
          : 0;
      } catch (error) {
        // Copied while a checkpoint was half done: the file alone is whole only between checkpoints (with its log it
        // always is). The next look copies it again.
        if ((error as { code?: string }).code !== 'SQLITE_CORRUPT') throw error;
        rows = 0;
      } finally {
        alone.close();
        rmSync(copy, { force: true });
      }
    }
    assert.equal(rows, 6_000);
    assert.deepEqual(failures, []);
  } finally {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  }
});

test('a checkpointer that cannot open its database reports the failure and stops cleanly', async () => {
  const failures: string[] = [];
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-checkpoints-'));
  // A log with no database beside it: the watch sees the log, the worker cannot open the database.
  writeFileSync(join(directory, 'missing.db-wal'), 'x');
  let started = false;
  const checkpointer = new WalCheckpointer(join(directory, 'missing.db'), { failed: (message) => failures.push(message), recovered: () => undefined }, () => (started = true), { startFromBytes: 1, lookEveryMs: 20 });
  for (let waited = 0; waited < 5_000 && failures.length === 0; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(started && checkpointer.running);
  assert.equal(failures.length, 1);
  assert.match(failures[0]!, /unable to open|no such|does not exist/i);
  await checkpointer.stop();
  rmSync(directory, { recursive: true, force: true });
});

/**
 * A process that commits as fast as it can while its worker checkpoints every few milliseconds, each commit acknowledged
 * on stdout once SQLite returned. Killed with SIGKILL (no clean close), mid-checkpoint or mid-commit as the moment falls.
 */
const WRITER = `
import SqliteDatabase from 'better-sqlite3';
import { WalCheckpointer } from ${JSON.stringify(fileURLToPath(new URL('./wal-checkpointer.ts', import.meta.url)))};
const path = process.argv[1];
const db = new SqliteDatabase(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
db.exec('create table if not exists probe (n integer primary key, pad text not null)');
new WalCheckpointer(path, { failed: (message) => console.error(message), recovered: () => undefined }, () => console.log('started'), { startFromBytes: 64 * 1024, lookEveryMs: 10 });
const insert = db.prepare('insert into probe (n, pad) values (?, ?)');
let n = 0;
const commitSome = () => {
  db.transaction(() => { for (let row = 0; row < 50; row++) insert.run(++n, 'x'.repeat(500)); })();
  process.stdout.write('committed ' + n + '\\n');
  setImmediate(commitSome);
};
commitSome();
`;

test('a process killed while its worker copies the log back loses no committed write, and its database stays whole', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-checkpoints-'));
  const path = join(directory, 'tollgate.db');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', WRITER, path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.setEncoding('utf8').on('data', (piece: string) => (output += piece));
    child.stderr.setEncoding('utf8').on('data', (piece: string) => (errors += piece));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Until the worker has copied pages under the writes (in WAL mode only a checkpoint writes them into the database
    // file, and the writer's own connection never checkpoints) — however long a loaded machine takes to start a thread —
    // then ~1.5 checkpoint periods (every 1 s) more, so that the kill falls at any point of one.
    const copiedPages = () => (statSync(path, { throwIfNoEntry: false })?.size ?? 0) > 256 * 1024;
    for (let waited = 0; waited < 30_000 && !(output.includes('started') && copiedPages()); waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    child.kill('SIGKILL');
    await exited;
    assert.ok(output.includes('started'), `the worker started: ${errors}`);
    assert.equal(errors, '', 'no checkpoint failed');
    const acknowledged = Math.max(...[...output.matchAll(/committed (\d+)/g)].map((match) => Number(match[1])));
    assert.ok(acknowledged > 1_000, `the writer committed (${acknowledged} rows)`);

    // The worker did copy under the writes: in WAL mode only a checkpoint writes pages into the database file itself,
    // which the writer's connection never did (its automatic checkpoints are off). The file alone is not read: killed
    // mid-checkpoint, it holds part of one until the reopening below finishes it from the log.
    assert.ok(copiedPages(), `checkpoints ran before the kill (the database file holds ${statSync(path).size} bytes)`);

    const reopened = new SqliteDatabase(path);
    try {
      assert.equal((reopened.pragma('integrity_check') as Array<{ integrity_check: string }>)[0]!.integrity_check, 'ok');
      const { count, highest } = reopened.prepare('select count(*) as count, max(n) as highest from probe').get() as { count: number; highest: number };
      assert.ok(highest >= acknowledged, `every acknowledged row is there (${highest} of ${acknowledged})`);
      assert.equal(count, highest, 'no gap: each commit is there whole or not at all');
    } finally {
      reopened.close();
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
