import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE, stringEnd, valueStart } from './json-scan.ts';

/** What `jsonShape` reads off JSON text without parsing it. */
export interface JsonShape {
  /** The text nests arrays and objects deeper than the limit (it stops reading there). */
  tooDeep: boolean;
  /**
   * Keys written in the text's objects, at every depth, each time one is written: a key written twice counts twice, where
   * JSON.parse keeps one (`keyCount` of the parsed value is then lower).
   */
  keys: number;
  /**
   * A key is, or may be once its escapes are read, `__proto__` or `constructor`: the parsed value must be checked for
   * prototype poisoning. Without one, JSON.parse's value holds neither key at any depth.
   */
  namesPrototype: boolean;
}

const PROTO = '__proto__';
const CONSTRUCTOR = 'constructor';

/**
 * Whether the key whose text (escapes unread) is text[start, end) can be `__proto__` or `constructor`: it is one of them as
 * written, or it holds an escape and is long enough to spell one (an escape is two to six characters for one).
 */
function mayNamePrototype(text: string, start: number, end: number): boolean {
  const length = end - start;
  if (length < PROTO.length) return false;
  if (length === PROTO.length && text.startsWith(PROTO, start)) return true;
  if (length === CONSTRUCTOR.length && text.startsWith(CONSTRUCTOR, start)) return true;
  for (let index = start; index < end; index++) if (text.charCodeAt(index) === BACKSLASH) return true;
  return false;
}

/**
 * The nesting and the keys of JSON text, counted without parsing. Deeply nested input is refused before it is parsed
 * because the validators and walkers that run after parsing recurse once per level: 10,000 levels overflow the stack (a 500)
 * where a bounded depth answers a clear 400. The key count tells a body that can be passed on as it came from one that
 * names a key twice or holds keys the gateway drops (see `bytesIfSameKeys`). Strings are skipped from quote to quote
 * (`stringEnd`), not a character at a time: a request body is mostly the text of its messages, and reading 54 KB of it a
 * character at a time took 115 µs, twice what JSON.parse takes for the whole body (issue 16). A string is a key when a
 * colon follows it. The keys that could poison a prototype are noted on the way (`namesPrototype`), so a body without one
 * is not searched again for them after it is parsed (app.ts's parser).
 */
export function jsonShape(text: string, limit: number): JsonShape {
  let depth = 0;
  let keys = 0;
  let namesPrototype = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index + 1);
      // An unterminated string: no more structure follows (JSON.parse refuses the text next).
      if (end === -1) break;
      if (valueStart(text, end + 1) !== -1) {
        keys++;
        if (!namesPrototype && mayNamePrototype(text, index + 1, end)) namesPrototype = true;
      }
      index = end;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return { tooDeep: true, keys, namesPrototype };
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return { tooDeep: false, keys, namesPrototype };
}

/** The keys of a parsed JSON value's objects, at every depth (the count `jsonShape` makes of its text). */
export function keyCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (const item of value) count += keyCount(item);
    return count;
  }
  const object = value as Record<string, unknown>;
  for (const key in object) count += 1 + keyCount(object[key]);
  return count;
}

/** A JSON body as its client sent it: its bytes and the keys its text wrote (`jsonShape`). */
export interface ClientBody {
  bytes: Buffer;
  keys: number;
}

/**
 * The client's bytes, to send on instead of serialising `value` again (issue 16: a long conversation is tens of kilobytes,
 * serialised and encoded again on every call), when they hold exactly `value`'s keys: `value` is what the gateway would
 * send, built from the parsed body by keeping or dropping its fields, never by adding or changing any (the caller's part).
 * With as many keys in the text as in `value`, none was dropped at any depth and none was written twice (JSON.parse
 * keeps the last of two, a vendor may read the first: the model billed must be the model served, the tool checked the
 * tool run).
 */
export function bytesIfSameKeys(body: ClientBody | undefined, value: unknown): Buffer | undefined {
  return body !== undefined && keyCount(value) === body.keys ? body.bytes : undefined;
}

/**
 * JSON text of an object with a member put first: `member` is `"name":value`, and the object must have another member
 * (it is followed by a comma) and not name `name` itself. One copy of the bytes, no parse.
 */
export function withMemberFirst(bytes: Buffer, member: Buffer): Buffer {
  let brace = 0;
  while (brace < bytes.length && bytes[brace] !== OPEN_BRACE) brace++;
  return Buffer.concat([bytes.subarray(0, brace + 1), member, MEMBER_SEPARATOR, bytes.subarray(brace + 1)]);
}

const MEMBER_SEPARATOR = Buffer.from(',');
