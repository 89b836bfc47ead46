import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonDepthExceeds } from './json-depth.ts';

test('counts nesting of arrays and objects, not brackets inside strings', () => {
  assert.equal(jsonDepthExceeds('{"a":[{"b":[1]}]}', 4), false);
  assert.equal(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3), true);
  assert.equal(jsonDepthExceeds(JSON.stringify({ text: '[[[[[[[[[[{{{{{{' }), 1), false);
  assert.equal(jsonDepthExceeds(JSON.stringify({ text: 'quote \\" then [[[[' }), 1), false);
  // Strings ending in backslashes, or holding runs of them before quotes: the brackets after them count, those in them not.
  assert.equal(jsonDepthExceeds(JSON.stringify({ a: 'ends in a backslash \\', b: [[1]] }), 2), true);
  assert.equal(jsonDepthExceeds(JSON.stringify({ a: 'ends in a backslash \\', b: [[1]] }), 3), false);
  assert.equal(jsonDepthExceeds(JSON.stringify({ a: 'two \\\\" and [[[[ one \\" ]]]] {{' }), 1), false);
});

test('10,000 levels exceed any sensible limit, siblings do not add up', () => {
  assert.equal(jsonDepthExceeds('['.repeat(10_000) + ']'.repeat(10_000), 256), true);
  assert.equal(jsonDepthExceeds(`[${'[1],'.repeat(10_000)}[1]]`, 2), false);
});
