#!/usr/bin/env node
// `node bin/thin-source-map.mjs dist/main.js.map` (npm run build runs it after esbuild): keeps one mapping where esbuild
// wrote one per token. Under `--enable-source-maps` node decodes a bundle's map the first time an error's stack is read
// (the first error logged) and keeps it for the life of the process: esbuild's ~150,000 mappings of the gateway's bundle
// took ~14 MB of heap decoded. A stack trace needs the source line of a position, so of the mappings that follow one
// another on a generated line and point into the same source line only the first is kept (~5× fewer); names are dropped
// (V8 names the functions of a trace itself). A position then maps to its true file and line, and to the column where that
// line's code starts on the generated line.
//
// Written by hand (base64 VLQ, ~30 lines): the source-map libraries decode a whole map into objects to re-encode it, which
// is what this avoids keeping, and the build needs no other package for it.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const DIGIT = new Map([...BASE64].map((character, index) => [character, index]));

/** The fields of one segment (relative values, as written). */
function decodeSegment(text) {
  const fields = [];
  let value = 0;
  let shift = 0;
  for (const character of text) {
    const digit = DIGIT.get(character);
    if (digit === undefined) throw new Error(`source map: "${character}" is not a base64 VLQ digit`);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) shift += 5;
    else {
      fields.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2);
      value = 0;
      shift = 0;
    }
  }
  return fields;
}

function encodeValue(value) {
  let rest = value < 0 ? -value * 2 + 1 : value * 2;
  let text = '';
  do {
    let digit = rest % 32;
    rest = Math.floor(rest / 32);
    if (rest > 0) digit |= 32;
    text += BASE64[digit];
  } while (rest > 0);
  return text;
}

/**
 * A source map (version 3, no sections) with one mapping per run of mappings on a generated line that point into the same
 * source line (or into none), and no names. Every other field is kept.
 */
export function thinSourceMap(map) {
  if (map.version !== 3 || typeof map.mappings !== 'string') throw new Error('source map: expected version 3 with mappings');
  // Absolute values of the last segment read (source, original line, original column carry over from line to line).
  let source = 0;
  let originalLine = 0;
  let originalColumn = 0;
  // The last segment written, for the relative values of the next.
  let writtenSource = 0;
  let writtenLine = 0;
  let writtenColumnInSource = 0;
  const lines = map.mappings.split(';').map((line) => {
    let column = 0;
    let writtenColumn = 0;
    let run;
    const kept = [];
    for (const text of line.split(',')) {
      if (text === '') continue;
      const fields = decodeSegment(text);
      column += fields[0];
      const mapped = fields.length >= 4;
      if (mapped) {
        source += fields[1];
        originalLine += fields[2];
        originalColumn += fields[3];
      }
      const key = mapped ? `${source}:${originalLine}` : '';
      if (key === run) continue;
      run = key;
      let segment = encodeValue(column - writtenColumn);
      writtenColumn = column;
      if (mapped) {
        segment += encodeValue(source - writtenSource) + encodeValue(originalLine - writtenLine) + encodeValue(originalColumn - writtenColumnInSource);
        writtenSource = source;
        writtenLine = originalLine;
        writtenColumnInSource = originalColumn;
      }
      kept.push(segment);
    }
    return kept.join(',');
  });
  return { ...map, names: [], mappings: lines.join(';') };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = process.argv[2];
  if (!path) throw new Error('usage: node bin/thin-source-map.mjs <file.js.map>');
  writeFileSync(path, JSON.stringify(thinSourceMap(JSON.parse(readFileSync(path, 'utf8')))));
}
