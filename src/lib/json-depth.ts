import { stringEnd } from './json-scan.ts';

const QUOTE = 0x22;

/**
 * The deepest nesting of arrays and objects in JSON text, counted without parsing. Deeply nested input is refused before
 * it is parsed because the validators and walkers that run after parsing recurse once per level: 10,000 levels overflow
 * the stack (a 500) where a bounded depth answers a clear 400. Strings are skipped from quote to quote (`stringEnd`), not a
 * character at a time: a request body is mostly the text of its messages, and reading 54 KB of it a character at a time
 * took 115 µs, twice what JSON.parse takes for the whole body (issue 16).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index + 1);
      // An unterminated string: no more structure follows (JSON.parse refuses the text next).
      if (end === -1) return false;
      index = end;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}
