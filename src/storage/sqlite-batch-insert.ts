import type SqliteDatabase from 'better-sqlite3';

/** Rows per multi-row INSERT at most (a batch's last statement takes the rest): 32 × 24 columns is far below SQLite's limit. */
export const ROWS_PER_INSERT = 32;

/** Thrown inside a batch's transaction when a multi-row INSERT skipped a row already written (see insertAll). */
export const ROW_ALREADY_WRITTEN = new Error('a row of the batch is already written');

/**
 * A batch writer's INSERT on SQLite (the ledger's, the request log's), prepared once for one row and once for each number
 * of rows up to ROWS_PER_INSERT (when first needed). The batch writers write SQLite with prepared statements rather than
 * through Kysely: SQLite runs in this process, so there is no round trip to save, only CPU. Rows already written (a batch
 * written again after its commit went through unacknowledged) are skipped by the statement's `on conflict … do nothing`.
 *
 * The multi-row statement does the statement's own work (cursors opened, the program started, bindings reset) once per
 * chunk instead of once per row, and its inserts find their b-tree pages where the previous row left the cursor:
 * callgrind (bench:instructions), the request log's insert in a chat call 38k → 30k instructions, the ledger's 8k fewer.
 */
export class SqliteBatchInsert<Row> {
  private readonly one: SqliteDatabase.Statement;
  /** The multi-row statements by their number of rows (index), prepared when a batch first needs one. */
  private readonly chunks: Array<SqliteDatabase.Statement | undefined> = [];
  private readonly chunkSql: (rows: number) => string;
  /** Scratch for the chunk's first row, whose repeated values the chunk binds once. */
  private readonly first: unknown[] = [];

  /**
   * `insertSql(source, valueOf)`: the INSERT of a SELECT from `source` (the rows, and the chunk's repeated values when
   * there are any), with its conflict clause; `valueOf(position)` is the SQL expression of a row's value at that position
   * (its `columnN`, or the chunk's repeated value in its place). `columns`: how many values a row binds; `pushValues`:
   * appends a row's values in that order. `repeated`: positions of text values that often repeat from row to row (a key,
   * a model, an endpoint): a chunk binds its first row's once, and a row with the same value binds 0 in its place — V8's
   * conversion of a string to UTF-8 and SQLite's copy of it were ~1,000 instructions per string a row (callgrind), an
   * integer is a tenth of that. A real value at these positions is text or null, never the integer 0.
   */
  constructor(
    private readonly sqlite: SqliteDatabase.Database,
    insertSql: (source: string, valueOf: (position: number) => string) => string,
    columns: number,
    private readonly pushValues: (values: unknown[], row: Row) => void,
    private readonly repeated: readonly number[] = [],
  ) {
    const tuple = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
    // SQLite names a VALUES list's columns column1, column2 …; the repeated values come first, as one constant row.
    const common = repeated.length === 0 ? '' : `(select ${repeated.map((_, index) => `? as repeated${index}`).join(', ')}) as repeated, `;
    const valueOf = (position: number): string => {
      const index = repeated.indexOf(position);
      return index === -1 ? `column${position + 1}` : `iif(column${position + 1} is 0, repeated.repeated${index}, column${position + 1})`;
    };
    this.one = sqlite.prepare(insertSql(`${common}(values ${tuple})`, valueOf));
    this.chunkSql = (rows) => insertSql(`${common}(values ${Array.from({ length: rows }, () => tuple).join(', ')})`, valueOf);
    this.chunks[ROWS_PER_INSERT] = sqlite.prepare(this.chunkSql(ROWS_PER_INSERT));
  }

  private chunk(rows: number): SqliteDatabase.Statement {
    return (this.chunks[rows] ??= this.sqlite.prepare(this.chunkSql(rows)));
  }

  /**
   * Inserts a row unless it is already there; true when it was inserted. The values go as arguments, not as one array:
   * better-sqlite3 reads an array's elements through V8's API, and binding was then ~40 % of the insert's instructions.
   */
  private insert(row: Row): boolean {
    const values: unknown[] = [];
    for (let index = 0; index < this.repeated.length; index++) values.push(null); // each row's own values stand
    this.pushValues(values, row);
    return this.one.run(...values).changes === 1;
  }

  /**
   * Inserts every row, ROWS_PER_INSERT at a time and the rest in one statement of its own size, calling `inserted` for
   * each row written now. The rest went row by row before: up to 31 statements a batch, each row's own statement costing
   * several times a row of a chunk — at the bench's load ~1.5 µs of a call's CPU (bench:profile). A chunk tells only how
   * many of its rows it wrote, so when one of them was already there it throws ROW_ALREADY_WRITTEN: the caller rolls its
   * transaction back and writes the batch again with `insert`, which tells row by row (`oneByOneOnRewrite`). Only a batch
   * written again after a lost acknowledgement takes that path. With `chunked` false every row goes alone.
   */
  insertAll(rows: readonly Row[], inserted: (row: Row) => void, chunked = true): void {
    if (!chunked) {
      for (const row of rows) if (this.insert(row)) inserted(row);
      return;
    }
    for (let start = 0; start < rows.length; ) {
      const size = Math.min(ROWS_PER_INSERT, rows.length - start);
      const values: unknown[] = [];
      this.pushChunk(values, rows, start, size);
      if (this.chunk(size).run(...values).changes !== size) throw ROW_ALREADY_WRITTEN;
      for (let index = start; index < start + size; index++) inserted(rows[index]!);
      start += size;
    }
  }

  /** A chunk's values: its first row's repeated values, then each row's, with 0 where a row repeats one of them. */
  private pushChunk(values: unknown[], rows: readonly Row[], start: number, size: number): void {
    const { repeated, first } = this;
    if (repeated.length === 0) {
      for (let index = start; index < start + size; index++) this.pushValues(values, rows[index]!);
      return;
    }
    first.length = 0;
    this.pushValues(first, rows[start]!);
    for (const position of repeated) values.push(first[position]);
    for (let index = start; index < start + size; index++) {
      const at = values.length;
      this.pushValues(values, rows[index]!);
      for (const position of repeated) {
        const value = values[at + position];
        if (value !== null && value === first[position]) values[at + position] = 0;
      }
    }
  }
}

/**
 * Runs a batch's transaction with multi-row inserts (`chunked` true), and once more row by row when a chunk met a row
 * already written (ROW_ALREADY_WRITTEN rolled the first transaction back).
 */
export async function oneByOneOnRewrite<T>(write: (chunked: boolean) => Promise<T>): Promise<T> {
  try {
    return await write(true);
  } catch (error) {
    if (error !== ROW_ALREADY_WRITTEN) throw error;
    return write(false);
  }
}
