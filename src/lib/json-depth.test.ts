import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonDepthExceeds, jsonShape } from './json-depth.ts';

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

test('counts the keys written at the top level of an object, a key written twice twice, none below it or in strings', () => {
  const keys = (text: string): number => jsonShape(text, 64).topLevelKeys;
  assert.equal(keys('{"model":"m","messages":[{"role":"user","content":"x"}],"n":1}'), 3);
  assert.equal(keys('{"model":"a","model":"b"}'), 2, 'written twice, counted twice (JSON.parse keeps one)');
  assert.equal(keys('{ "a" : { "b": 1, "c": [ "d", {"e": 2} ] } , "f" : "g, \\"h\\": 1" }'), 2, 'nested keys, and text like a key inside a string, are not counted');
  assert.equal(keys('{}'), 0);
  assert.equal(keys('[{"a":1},{"b":2}]'), 0, 'an array is not an object');
  assert.equal(keys('"text"'), 0);
  assert.equal(keys('{"a":"unterminated'), 1);
  assert.deepEqual(jsonShape('{"a":[[[1]]]}', 3), { tooDeep: true, topLevelKeys: 1 });
});
