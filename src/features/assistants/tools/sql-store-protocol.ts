/** Messages between the SQL store toolset and its child process (sql-store-worker.ts), over the IPC channel as JSON. */

/** Rows a query returns at most; the answer says when there were more. */
export const MAX_ROWS = 200;
/** A query stops collecting rows once their JSON passes this many characters. */
export const MAX_ROW_CHARS = 20_000;

/** A value as the model reads it: integers beyond 2^53 and blobs become text. */
export type SqlValue = string | number | null;
export type SqlRow = Record<string, SqlValue>;

export interface SqlStoreRequest {
  id: number;
  sql: string;
}

export type SqlStoreAnswer =
  | { kind: 'rows'; columns: string[]; rows: SqlRow[]; truncated: boolean }
  | { kind: 'changes'; changes: number; lastInsertRowid: number | string }
  | { kind: 'error'; message: string };

export type SqlStoreMessage =
  | { kind: 'ready' }
  | { kind: 'failed'; message: string }
  | { kind: 'answer'; id: number; answer: SqlStoreAnswer };
