import assert from 'node:assert/strict';
import { test } from 'node:test';
import { refuseStatement, statementWords } from './sql-statement-guard.ts';

test('words are read outside string literals and comments, quoted identifiers included', () => {
  assert.deepEqual(statementWords(`SELECT 'attach ''x''' AS "Name", [pragma] -- vacuum\n FROM t /* detach */`), ['SELECT', 'AS', 'NAME', 'PRAGMA', 'FROM', 'T']);
});

test('ordinary statements pass', () => {
  for (const sql of [
    'CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)',
    "INSERT INTO notes (text) VALUES ('remember to attach the file; PRAGMA is a word here')",
    'SELECT * FROM pragma_table_info(\'notes\')',
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c',
  ]) {
    assert.equal(refuseStatement(sql), undefined, sql);
  }
});

test('ATTACH, DETACH, PRAGMA and VACUUM are refused as statements, load_extension and fts3_tokenizer anywhere', () => {
  assert.match(refuseStatement("ATTACH DATABASE '/tmp/x.db' AS other") ?? '', /ATTACH statements are not allowed/);
  assert.match(refuseStatement('  /* hi */ detach other') ?? '', /DETACH/);
  assert.match(refuseStatement('PRAGMA max_page_count = 1000000') ?? '', /PRAGMA/);
  assert.match(refuseStatement("VACUUM INTO '/tmp/copy.db'") ?? '', /VACUUM/);
  assert.match(refuseStatement("SELECT load_extension('/tmp/evil')") ?? '', /LOAD_EXTENSION/);
  assert.match(refuseStatement('SELECT "load_extension"(\'/tmp/evil\')') ?? '', /LOAD_EXTENSION/);
  assert.match(refuseStatement("SELECT hex(fts3_tokenizer('simple'))") ?? '', /FTS3_TOKENIZER/);
  assert.match(refuseStatement('EXPLAIN ATTACH \'x\' AS y') ?? '', /ATTACH/);
  assert.match(refuseStatement('') ?? '', /empty/);
});

test('a quote inside a comment does not hide what follows it', () => {
  assert.match(refuseStatement("SELECT 1 -- it's\n, load_extension('x') --'") ?? '', /LOAD_EXTENSION/);
  assert.match(refuseStatement("SELECT 1 /* it's */, load_extension('x') /* ' */") ?? '', /LOAD_EXTENSION/);
});
