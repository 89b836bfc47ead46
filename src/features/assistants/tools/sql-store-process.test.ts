import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqlStoreProcess } from './sql-store-process.ts';

// Below the statement guard: what the SQLite build itself allows, should a statement get past the guard.
test('the SQLite build has no extension loading and no file functions', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'tollgate-sql-process-'));
  const store = new SqlStoreProcess(join(directory, 'store.db'), 1024 * 1024);
  const signal = new AbortController().signal;
  try {
    const loaded = await store.run("SELECT load_extension('/tmp/evil.so')", 2_000, signal);
    assert.equal(loaded.kind, 'error');
    assert.match(loaded.kind === 'error' ? loaded.message : '', /not authorized/);
    for (const fn of ["readfile('/etc/passwd')", "writefile('/tmp/x', 'y')", "edit('x')", "fts3_tokenizer('evil', x'4141414141414141')"]) {
      const answer = await store.run(`SELECT ${fn}`, 2_000, signal);
      assert.equal(answer.kind, 'error', fn);
      assert.match(answer.kind === 'error' ? answer.message : '', /no such function|fts3tokenize disabled/, fn);
    }
    const ok = await store.run('SELECT 1 AS one', 2_000, signal);
    assert.deepEqual(ok, { kind: 'rows', columns: ['one'], rows: [{ one: 1 }], truncated: false });
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
});

test('an aborted chat stops the running statement', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'tollgate-sql-process-'));
  const store = new SqlStoreProcess(join(directory, 'store.db'), 1024 * 1024);
  const abort = new AbortController();
  try {
    await store.run('SELECT 1', 2_000, abort.signal);
    setTimeout(() => abort.abort(), 200);
    const started = Date.now();
    const answer = await store.run('WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c', 10_000, abort.signal);
    assert.deepEqual(answer, { kind: 'error', message: 'the chat was cancelled' });
    assert.ok(Date.now() - started < 2_000);
  } finally {
    await store.close();
    await rm(directory, { recursive: true, force: true });
  }
});
