import { sql, type RawBuilder, type SqlBool } from 'kysely';
import { encodeIdCursor } from '../lib/id-cursor.ts';

export { decodeIdCursor } from '../lib/id-cursor.ts';

/** Rows of one page plus the cursor of the next (the query asked for `limit + 1` rows). */
export function pageOf<Row extends { id: string }>(rows: Row[], limit: number): { rows: Row[]; nextCursor: string | undefined } {
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: rows.length > limit ? encodeIdCursor(page[page.length - 1]!.id) : undefined };
}

/** Case-insensitive "contains" on both engines (PostgreSQL's LIKE is case-sensitive, SQLite's is not); `%` and `_` match literally. */
export function containsText(column: string, text: string): RawBuilder<SqlBool> {
  const pattern = `%${text.toLowerCase().replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
  return sql<SqlBool>`lower(coalesce(${sql.ref(column)}, '')) like ${pattern} escape '\\'`;
}
