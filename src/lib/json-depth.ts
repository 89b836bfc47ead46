/**
 * The deepest nesting of arrays and objects in JSON text, counted without parsing. Deeply nested input is refused before
 * it is parsed because the validators and walkers that run after parsing recurse once per level: 10,000 levels overflow
 * the stack (a 500) where a bounded depth answers a clear 400.
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 0x5c) index++; // a backslash escapes the next character, a quote included
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) {
      inString = true;
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return true;
    } else if (code === 0x5d || code === 0x7d) {
      depth--;
    }
  }
  return false;
}
