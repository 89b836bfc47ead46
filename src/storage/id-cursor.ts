import { invalidParam } from '../core/errors.ts';

/**
 * Opaque list cursors over prefixed ids, which sort by creation (lib/ids.ts): a page ends at an id, the next one starts
 * after it. Base64url so clients treat it as opaque.
 */
export const encodeIdCursor = (id: string): string => Buffer.from(id, 'utf8').toString('base64url');

/** The id inside a cursor; a cursor that is not one of ours is a 400. */
export function decodeIdCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z]+_[0-9A-Za-z]+$/.test(id)) throw invalidParam('cursor', 'is not a cursor this list gave');
  return id;
}

/** A page of `limit` from `limit + 1` rows fetched: the extra row says there is a next page. */
export function pageOf<T extends { id: string }>(rows: T[], limit: number): { items: T[]; nextCursor: string | null } {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? encodeIdCursor(items[items.length - 1]!.id) : null };
}
