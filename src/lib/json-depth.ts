import { stringEnd } from './json-scan.ts';

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const COMMA = 0x2c;

/** What `jsonShape` reads off JSON text without parsing it. */
export interface JsonShape {
  /** The text nests arrays and objects deeper than the limit (it stops reading there). */
  tooDeep: boolean;
  /**
   * Keys written at the top level of an object, each time one is written (a key written twice counts twice, which
   * JSON.parse keeps once); 0 for text that is not an object.
   */
  topLevelKeys: number;
}

/**
 * The nesting and top-level keys of JSON text, counted without parsing. Deeply nested input is refused before it is parsed
 * because the validators and walkers that run after parsing recurse once per level: 10,000 levels overflow the stack (a 500)
 * where a bounded depth answers a clear 400. The key count tells a body that can be passed on as it came from one that
 * names a key twice (see `passThroughBody`). Strings are skipped from quote to quote (`stringEnd`), not a character at a
 * time: a request body is mostly the text of its messages, and reading 54 KB of it a character at a time took 115 µs,
 * twice what JSON.parse takes for the whole body (issue 16).
 */
export function jsonShape(text: string, limit: number): JsonShape {
  let depth = 0;
  let topLevelKeys = 0;
  // At depth 1 in an object, after its `{` or a `,`: the next string is a key.
  let keyNext = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index + 1);
      // An unterminated string: no more structure follows (JSON.parse refuses the text next).
      if (end === -1) break;
      if (keyNext) topLevelKeys++;
      keyNext = false;
      index = end;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > limit) return { tooDeep: true, topLevelKeys };
      keyNext = depth === 1 && code === OPEN_BRACE;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
      keyNext = false;
    } else if (code === COMMA) {
      keyNext = depth === 1 && topLevelKeys > 0;
    }
  }
  return { tooDeep: false, topLevelKeys };
}

/** Whether JSON text nests arrays and objects deeper than `limit` (`jsonShape`). */
export const jsonDepthExceeds = (text: string, limit: number): boolean => jsonShape(text, limit).tooDeep;
