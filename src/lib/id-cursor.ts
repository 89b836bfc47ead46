/**
 * Cursors of lists ordered by id, newest first. Ids sort by creation (ids.ts), so a page is "ids below the cursor" and the
 * cursor is the last id shown, wrapped so clients treat it as opaque.
 */
export const encodeIdCursor = (id: string): string => Buffer.from(`id:${id}`).toString('base64url');

/** The id a cursor names; undefined for a cursor this gateway did not make (routes answer 400). */
export function decodeIdCursor(cursor: string): string | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith('id:') && text.length > 3 ? text.slice(3) : undefined;
}
