import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { silentLogger, testAssistant, testToolContext } from '../../../../test/helpers/assistant-fixture.ts';
import { SQL_TOOL_NAME, SqlStoreToolsetFactory, sqlStorePath, type SqlStoreOptions } from './sql-store-toolset.ts';
import type { Toolset } from './toolset.ts';

let dataDir: string;
const open: Toolset[] = [];

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'tollgate-sql-store-'));
});
after(async () => {
  await Promise.all(open.map((toolset) => toolset.close()));
  await rm(dataDir, { recursive: true, force: true });
});

async function openStore(assistantId: string, options: Partial<SqlStoreOptions> = {}): Promise<Toolset> {
  const factory = new SqlStoreToolsetFactory({ dataDir, limitBytes: 1024 * 1024, logger: silentLogger, ...options });
  const toolset = await factory.open(testAssistant({ id: assistantId, sqlStore: true }));
  assert.ok(toolset, 'sqlStore: true gives a toolset');
  open.push(toolset);
  return toolset;
}

const sql = (toolset: Toolset, statement: string): Promise<string> => toolset.call(SQL_TOOL_NAME, { sql: statement }, testToolContext());

test('no toolset without sqlStore; the tool is sql_query({sql})', async () => {
  const factory = new SqlStoreToolsetFactory({ dataDir, limitBytes: 1024 * 1024, logger: silentLogger });
  assert.equal(await factory.open(testAssistant({ sqlStore: false })), undefined);
  const toolset = await openStore('asst_definition');
  assert.deepEqual(toolset.definitions.map((definition) => definition.name), ['sql_query']);
  assert.deepEqual(toolset.definitions[0]?.parameters.required, ['sql']);
});

test('create, insert and select round trip; the data stays for the next chat turn', async () => {
  const first = await openStore('asst_roundtrip');
  assert.equal(await sql(first, 'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)'), '{"changes":0,"lastInsertRowid":0}');
  assert.equal(await sql(first, "INSERT INTO notes (text) VALUES ('milk'), ('bread')"), '{"changes":2,"lastInsertRowid":2}');
  assert.equal(await sql(first, 'SELECT id, text FROM notes ORDER BY id'), '[{"id":1,"text":"milk"},{"id":2,"text":"bread"}]');
  assert.equal(await sql(first, "SELECT * FROM notes WHERE text = 'cheese'"), 'No rows (columns: id, text).');
  await first.close();
  assert.ok(existsSync(sqlStorePath(dataDir, 'asst_roundtrip')), 'the file is <dataDir>/sql-stores/<assistantId>.db');

  const second = await openStore('asst_roundtrip');
  assert.equal(await sql(second, 'SELECT count(*) AS n FROM notes'), '[{"n":2}]');
});

test("each assistant's database is separate", async () => {
  const one = await openStore('asst_one');
  const two = await openStore('asst_two');
  await sql(one, 'CREATE TABLE secrets (value TEXT)');
  await sql(one, "INSERT INTO secrets VALUES ('only for one')");
  assert.match(await sql(two, 'SELECT * FROM secrets'), /^Error: no such table: secrets/);
  assert.equal(await sql(two, "SELECT name FROM sqlite_schema WHERE type = 'table'"), 'No rows (columns: name).');
});

test('ATTACH, PRAGMA, VACUUM and load_extension are refused before they run', async () => {
  const toolset = await openStore('asst_refusals');
  const outside = join(dataDir, 'outside.db');
  assert.match(await sql(toolset, `ATTACH DATABASE '${outside}' AS other`), /^Error: ATTACH statements are not allowed/);
  assert.equal(existsSync(outside), false, 'ATTACH created no file');
  assert.match(await sql(toolset, 'PRAGMA max_page_count = 100000000'), /^Error: PRAGMA statements are not allowed/);
  assert.match(await sql(toolset, `VACUUM INTO '${outside}'`), /^Error: VACUUM statements are not allowed/);
  assert.match(await sql(toolset, "SELECT load_extension('/tmp/evil.so')"), /^Error: LOAD_EXTENSION is not allowed/);
  assert.equal(existsSync(outside), false);
  assert.deepEqual((await readdir(join(dataDir, 'sql-stores'))).filter((name) => name.startsWith('outside')), []);
});

test('one statement per call; SQL errors come back as error text', async () => {
  const toolset = await openStore('asst_errors');
  assert.match(await sql(toolset, 'CREATE TABLE a (x); CREATE TABLE b (y)'), /^Error: .*more than one statement/);
  assert.match(await sql(toolset, 'SELEC nothing'), /^Error: near "SELEC": syntax error/);
  assert.match(await toolset.call(SQL_TOOL_NAME, { sql: 42 }, testToolContext()), /^Error: `sql` must be one SQL statement/);
  assert.match(await toolset.call('other_tool', {}, testToolContext()), /^Error: there is no tool named other_tool/);
});

test('results are capped at 200 rows with a note', async () => {
  const toolset = await openStore('asst_rows');
  const answer = await sql(toolset, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300) SELECT x FROM c');
  const [json, note] = answer.split('\n');
  assert.equal((JSON.parse(json ?? '[]') as unknown[]).length, 200);
  assert.match(note ?? '', /only the first 200 rows are shown/);
});

test('a statement over the time limit is stopped, and the store works again afterwards', async () => {
  const toolset = await openStore('asst_slow', { timeoutMs: 2_000 });
  await sql(toolset, 'CREATE TABLE t (x)');
  const started = Date.now();
  const answer = await sql(toolset, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT count(*) FROM c');
  const elapsed = Date.now() - started;
  assert.match(answer, /^Error: the statement did not finish within 2 s and was stopped/);
  assert.ok(elapsed >= 2_000 && elapsed < 4_000, `stopped after ${elapsed} ms`);
  assert.equal(await sql(toolset, 'INSERT INTO t VALUES (1)'), '{"changes":1,"lastInsertRowid":1}');
});

test('a database over the size limit refuses to grow', async () => {
  const toolset = await openStore('asst_full', { limitBytes: 64 * 1024 });
  await sql(toolset, 'CREATE TABLE blobs (data BLOB)');
  assert.equal(await sql(toolset, 'INSERT INTO blobs VALUES (randomblob(1000))'), '{"changes":1,"lastInsertRowid":1}');
  assert.match(await sql(toolset, 'INSERT INTO blobs VALUES (randomblob(200000))'), /^Error: database or disk is full \(the store is limited to 65536 bytes\)/);
  assert.equal(await sql(toolset, 'SELECT count(*) AS n FROM blobs'), '[{"n":1}]');
});
