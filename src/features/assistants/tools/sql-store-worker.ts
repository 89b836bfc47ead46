// The SQL store's child process: one assistant's SQLite file, one statement per request message. It runs as a process
// of its own, not a worker thread, so that a statement over the time limit can be stopped: terminating a worker
// thread waits until SQLite returns to JavaScript, which a single long step (a recursive CTE) does only at its end.
//
// argv: <database file> <size limit in bytes>. Extension loading is never enabled (better-sqlite3 enables it only
// when asked) and the library is built without file functions; ATTACH, PRAGMA and VACUUM are refused before a
// statement reaches this process (sql-statement-guard.ts).

import Database from 'better-sqlite3';
import { MAX_ROW_CHARS, MAX_ROWS, type SqlRow, type SqlStoreAnswer, type SqlStoreMessage, type SqlValue } from './sql-store-protocol.ts';

/** Longest text value sent back; longer ones are cut (the whole answer is capped again by the toolset). */
const MAX_VALUE_CHARS = MAX_ROW_CHARS;

const send = (message: SqlStoreMessage): void => void process.send?.(message);

function open(path: string, limitBytes: number): Database.Database {
  const database = new Database(path, { timeout: 1_000 });
  const pageSize = Number(database.pragma('page_size', { simple: true }));
  database.pragma(`max_page_count = ${Math.max(1, Math.floor(limitBytes / pageSize))}`);
  database.pragma('trusted_schema = OFF');
  return database;
}

function jsonValue(value: unknown): SqlValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (Buffer.isBuffer(value)) return `<blob ${value.length} bytes${value.length > 0 ? `: x'${value.subarray(0, 32).toString('hex')}${value.length > 32 ? '…' : ''}'` : ''}>`;
  const text = String(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
}

function execute(database: Database.Database, sql: string): SqlStoreAnswer {
  const statement = database.prepare(sql);
  if (!statement.reader) {
    const info = statement.run();
    const rowid = info.lastInsertRowid;
    return { kind: 'changes', changes: info.changes, lastInsertRowid: typeof rowid === 'bigint' ? rowid.toString() : rowid };
  }
  const columns = statement.columns().map((column) => column.name);
  const rows: SqlRow[] = [];
  let chars = 2;
  let truncated = false;
  for (const row of statement.iterate() as IterableIterator<Record<string, unknown>>) {
    if (rows.length >= MAX_ROWS || chars > MAX_ROW_CHARS) {
      truncated = true;
      break;
    }
    const converted: SqlRow = {};
    for (const [name, value] of Object.entries(row)) converted[name] = jsonValue(value);
    chars += JSON.stringify(converted).length + 1;
    rows.push(converted);
  }
  return { kind: 'rows', columns, rows, truncated };
}

function main(): void {
  const [path, limitText] = process.argv.slice(2);
  let database: Database.Database;
  try {
    if (!path || !limitText) throw new Error('usage: sql-store-worker <database file> <size limit in bytes>');
    database = open(path, Number(limitText));
  } catch (error) {
    send({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    process.exitCode = 1;
    process.disconnect?.();
    return;
  }
  process.on('message', (message: unknown) => {
    if (typeof message !== 'object' || message === null) return;
    const { id, sql } = message as { id?: unknown; sql?: unknown };
    if (typeof id !== 'number' || typeof sql !== 'string') return;
    let answer: SqlStoreAnswer;
    try {
      answer = execute(database, sql);
    } catch (error) {
      answer = { kind: 'error', message: error instanceof Error ? error.message : String(error) };
    }
    send({ kind: 'answer', id, answer });
  });
  // The toolset closes the channel when the chat turn ends; an open transaction is rolled back by closing.
  process.on('disconnect', () => {
    database.close();
    process.exit(0);
  });
  send({ kind: 'ready' });
}

main();
