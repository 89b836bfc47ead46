import assert from 'node:assert/strict';
import { test } from 'node:test';
import { z } from 'zod';
import { GatewayError } from '../core/errors.ts';
import { chatRequestSchema } from './openai/chat-request.ts';
import { parseOrThrow } from './validation.ts';

/** What zod's own parse gives: the value, or the 400 parseOrThrow turns its first issue into. */
function zodOutcome(schema: z.ZodType, input: unknown): { value: unknown } | { error: string } {
  const result = schema.safeParse(input);
  if (result.success) return { value: result.data };
  return { error: result.error.issues[0]!.path.join('.') };
}

function outcome(schema: z.ZodType, input: unknown): { value: unknown } | { error: string; message: string } {
  try {
    return { value: parseOrThrow(schema, input) };
  } catch (error) {
    assert.ok(error instanceof GatewayError, `a GatewayError, not ${String(error)}`);
    return { error: error.param ?? '', message: error.message };
  }
}

const plain = z.object({ name: z.string().min(1), count: z.number().int().optional(), mode: z.enum(['a', 'b']).default('a'), note: z.string().nullable().optional() });
const loose = z.looseObject({ role: z.string(), content: z.string().optional() });
const strict = z.strictObject({ id: z.string() });
const refined = z.object({ low: z.number(), high: z.number() }).refine((value) => value.low <= value.high, { message: 'low above high', path: ['low'] });

const cases: Array<[string, z.ZodType, unknown]> = [
  ['plain: every field', plain, { name: 'x', count: 2, mode: 'b', note: null }],
  ['plain: a default filled in', plain, { name: 'x' }],
  ['plain: unknown keys dropped', plain, { name: 'x', extra: 1, constructor: 'y', toString: 2 }],
  ['plain: a required field missing', plain, { count: 1 }],
  ['plain: a field of the wrong type', plain, { name: 'x', count: 1.5 }],
  ['plain: an enum value out of range', plain, { name: 'x', mode: 'c' }],
  ['plain: a check on a present field', plain, { name: '' }],
  ['plain: not an object', plain, ['name']],
  ['plain: null', plain, null],
  ['loose: other keys kept', loose, { role: 'user', content: 'hi', cache_control: { type: 'ephemeral' } }],
  ['loose: a required field missing', loose, { content: 'hi' }],
  ['strict: an unknown key refused', strict, { id: 'a', other: 1 }],
  ['strict: valid', strict, { id: 'a' }],
  ['refined: the whole-object check runs', refined, { low: 3, high: 1 }],
  ['refined: valid', refined, { low: 1, high: 3 }],
  ['chat: the bench body', chatRequestSchema, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }] }],
  ['chat: gateway and unknown fields', chatRequestSchema, { model: 'm', messages: [{ role: 'user', content: 'x', name: 'n', extra: true }], useWalletBalance: true, unknown_field: 1, temperature: 0.5 }],
  ['chat: nested failure', chatRequestSchema, { model: 'm', messages: [{ role: 'wizard', content: 'x' }] }],
  ['chat: empty messages', chatRequestSchema, { model: 'm', messages: [] }],
  ['chat: no model', chatRequestSchema, { messages: [{ role: 'user', content: 'x' }] }],
];

test('parseOrThrow gives what zod gives: the same value, or a 400 naming the same field', () => {
  for (const [name, schema, input] of cases) {
    const expected = zodOutcome(schema, input);
    const actual = outcome(schema, input);
    if ('value' in expected) assert.deepEqual(actual, expected, name);
    else {
      assert.ok('error' in actual, `${name}: expected a 400`);
      // The error names the first field zod reports, whichever way the value was parsed.
      assert.equal(actual.error.replace(/\[(\d+)\]/g, '.$1'), expected.error || 'body', name);
    }
  }
});

test('parseOrThrow keeps the 400 texts of zod: a missing field is "is required"', () => {
  assert.throws(() => parseOrThrow(plain, { count: 1 }), (error: GatewayError) => error.param === 'name' && error.message === 'name: is required');
  assert.throws(
    () => parseOrThrow(chatRequestSchema, { model: 'm', messages: [] }),
    (error: GatewayError) => error.param === 'messages' && error.message === 'messages: must contain at least one message',
  );
});

test('parseOrThrow never takes a key from the prototype for a field', () => {
  const value = parseOrThrow(plain, JSON.parse('{"name":"x","hasOwnProperty":1,"__defineGetter__":2}')) as Record<string, unknown>;
  assert.deepEqual(value, { name: 'x', mode: 'a' });
});
