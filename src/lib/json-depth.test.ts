import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesIfSameKeys, jsonShape, keyCount, withMemberFirst } from './json-depth.ts';

const jsonDepthExceeds = (text: string, limit: number): boolean => jsonShape(text, limit).tooDeep;

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

test('counts the keys written at every depth, a key written twice twice, none in strings; keyCount counts a parsed value the same', () => {
  const keys = (text: string): number => jsonShape(text, 64).keys;
  const text = '{"model":"m","messages":[{"role":"user","content":"x"}],"n":1}';
  assert.equal(keys(text), 5);
  assert.equal(keyCount(JSON.parse(text)), 5);
  assert.equal(keys('{"model":"a","model":"b"}'), 2, 'written twice, counted twice');
  assert.equal(keyCount(JSON.parse('{"model":"a","model":"b"}')), 1, 'JSON.parse keeps one');
  assert.equal(keys('{"a":[{"b":1,"b":2}]}'), 3, 'twice in a nested object');
  const spaced = '{ "a" : { "b"\n: 1, "c": [ "d", {"e"\t :2} ] } , "f" : "g, \\"h\\": 1" , "i":"j:"}';
  assert.equal(keys(spaced), 6, 'whitespace before a colon; text like a key, or a string ending in a colon, inside a value is not a key');
  assert.equal(keyCount(JSON.parse(spaced)), 6);
  assert.equal(keys('{"caf\\u00e9":1,"a\\"b":2}'), 2, 'keys with escapes');
  assert.equal(keys('{}'), 0);
  assert.equal(keys('[{"a":1},{"b":2}]'), 2, 'objects inside an array');
  assert.equal(keys('"text"'), 0);
  assert.equal(keys('["a", "b" ,"c"]'), 0, 'strings in an array are values');
  assert.equal(keys('{"a":"unterminated'), 1);
  assert.deepEqual(jsonShape('{"a":[[[1]]]}', 3), { tooDeep: true, keys: 1, namesPrototype: false });
});

test('bytesIfSameKeys gives the bytes only for a value with as many keys as the text wrote', () => {
  const text = '{"a":{"b":1},"c":[{"d":2}]}';
  const body = { bytes: Buffer.from(text), keys: jsonShape(text, 64).keys };
  assert.equal(bytesIfSameKeys(body, JSON.parse(text)), body.bytes);
  assert.equal(bytesIfSameKeys(body, { a: { b: 1 }, c: [{}] }), undefined, 'a nested key dropped');
  assert.equal(bytesIfSameKeys(undefined, {}), undefined);
});

test('withMemberFirst puts a member first in an object, after any leading whitespace, and keeps every other byte', () => {
  const member = Buffer.from('"s":{"u":true}');
  assert.equal(withMemberFirst(Buffer.from('{"a":1}'), member).toString(), '{"s":{"u":true},"a":1}');
  assert.equal(withMemberFirst(Buffer.from(' \n {  "a" : [1] }'), member).toString(), ' \n {"s":{"u":true},  "a" : [1] }');
  assert.deepEqual(JSON.parse(withMemberFirst(Buffer.from('{"a":"caf\u00e9"}'), member).toString()), { s: { u: true }, a: 'caf\u00e9' });
});

test('notes a key that is, or may be once its escapes are read, __proto__ or constructor; values and other keys are not', () => {
  const names = (text: string): boolean => jsonShape(text, 64).namesPrototype;
  assert.equal(names('{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":1,"tool_choice":"auto"}'), false);
  assert.equal(names('{"__proto__":{"a":1}}'), true);
  assert.equal(names('{"a":[{"b":{"constructor":{"prototype":{}}}}]}'), true, 'at any depth');
  assert.equal(names('{"a" : 1, "constructor"\n: 2}'), true, 'blanks before the colon');
  assert.equal(names('{"\\u005f_proto__":1}'), true, 'an escape');
  assert.equal(names('{"\\u0063onstructor":1}'), true);
  assert.equal(names('{"a\\"b c d e f":1}'), true, 'any key with an escape and length enough is checked after parsing');
  assert.equal(names('{"a\\"b":1}'), false, 'too short to spell either');
  assert.equal(names('{"content":"\\"__proto__\\": and \\"constructor\\": in text"}'), false, 'the words inside a value');
  assert.equal(names('["__proto__","constructor"]'), false, 'strings in an array are values');
  assert.equal(names('{"__proto_x":1,"constructors":2}'), false, 'other keys of those lengths or longer');
});
