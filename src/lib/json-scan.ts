// Reading a few values out of JSON text without parsing it all (issue 16: bodies and stream frames that pass through).

export const QUOTE = 34;
export const BACKSLASH = 92;
const COLON = 58;
export const OPEN_BRACE = 123;
export const CLOSE_BRACE = 125;
export const OPEN_BRACKET = 91;
export const CLOSE_BRACKET = 93;
const COMMA = 44;

/** Where the value after a key (ending at `from`) starts: past blanks, `:` and blanks; -1 when no `:` follows. */
export function valueStart(raw: string, from: number): number {
  let index = skipBlanks(raw, from);
  if (raw.charCodeAt(index) !== COLON) return -1;
  index = skipBlanks(raw, index + 1);
  return index < raw.length ? index : -1;
}

const isBlank = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13;

function skipBlanks(raw: string, from: number): number {
  let index = from;
  while (isBlank(raw.charCodeAt(index))) index++;
  return index;
}

/**
 * The index of the quote closing a string whose text starts at `from`; -1 if it does not close. It jumps from quote to quote
 * (`indexOf`, native) and counts the backslashes before each: a quote after an odd number of them is escaped. Reading the
 * text a character at a time cost ~2.5 µs a kilobyte, and most of a vendor's answer is the text of its strings.
 */
export function stringEnd(raw: string, from: number): number {
  for (let index = raw.indexOf('"', from); index !== -1; index = raw.indexOf('"', index + 1)) {
    let backslashes = 0;
    while (index - backslashes - 1 >= from && raw.charCodeAt(index - backslashes - 1) === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return index;
  }
  return -1;
}

/** JSON-escaped text (`escapedText`, or `escapeJsonText`'s output) as the text it stands for. */
export function decodeJsonText(escaped: string): string {
  if (!escaped.includes('\\')) return escaped;
  try {
    return JSON.parse(`"${escaped}"`) as string;
  } catch {
    return escaped;
  }
}

/** Text as it would stand inside a JSON string. */
export const escapeJsonText = (text: string): string => (text === '' ? '' : JSON.stringify(text).slice(1, -1));

/**
 * Where the value of a top-level key of a JSON object's text starts and ends ([start, end)), found in one pass that
 * skips strings and tracks nesting; undefined when the text is not one object, the key is not at its top level, or it is
 * there twice. A body passed on with one value replaced is then spliced, not parsed and serialised again.
 */
export function topLevelValue(text: string, key: string): { start: number; end: number } | undefined {
  const length = text.length;
  let index = skipBlanks(text, 0);
  if (text.charCodeAt(index) !== OPEN_BRACE) return undefined;
  let depth = 0;
  let found: { start: number; end: number } | undefined;
  let expectKey = false;
  for (; index < length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index + 1);
      if (end === -1) return undefined;
      if (depth === 1 && expectKey && end - index - 1 === key.length && text.startsWith(key, index + 1)) {
        const start = valueStart(text, end + 1);
        if (start === -1 || found) return undefined;
        const valueEnd = valueEndAt(text, start);
        if (valueEnd === -1) return undefined;
        found = { start, end: valueEnd };
        index = valueEnd - 1;
        expectKey = false;
        continue;
      }
      index = end;
      expectKey = false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      expectKey = code === OPEN_BRACE;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return skipBlanks(text, index + 1) === length ? found : undefined;
    } else if (code === COMMA) expectKey = true;
  }
  return undefined;
}

/** The end (exclusive) of the JSON value starting at `start`: a string, an object or array (nesting and strings skipped), or a literal. */
function valueEndAt(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === QUOTE) {
    const end = stringEnd(text, start + 1);
    return end === -1 ? -1 : end + 1;
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    let index = start;
    for (let code = text.charCodeAt(index); index < text.length && code !== COMMA && code !== CLOSE_BRACE && code !== CLOSE_BRACKET; code = text.charCodeAt(++index));
    while (index > start && isBlank(text.charCodeAt(index - 1))) index--;
    return index;
  }
  let depth = 0;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index + 1);
      if (end === -1) return -1;
      index = end;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) depth++;
    else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return -1;
}

/**
 * The JSON-escaped text of the string values of `keys` (a pattern like /"(text|partial_json)"\s*:\s*"/g ending at the
 * opening quote of the value), in order; undefined when a string does not close.
 */
export function escapedStringValues(raw: string, keys: RegExp): string | undefined {
  let escaped = '';
  keys.lastIndex = 0;
  // test, not exec: the same walk through lastIndex without a match array per key (issue 16).
  while (keys.test(raw)) {
    const end = stringEnd(raw, keys.lastIndex);
    if (end === -1) return undefined;
    escaped += raw.slice(keys.lastIndex, end);
    keys.lastIndex = end + 1;
  }
  return escaped;
}
