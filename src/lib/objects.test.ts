import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extended } from './objects.ts';

test('extended: the base, then the extra fields, in order; a shared name takes the extra value in its first place', () => {
  const base = { prompt_tokens: 3, completion_tokens: 4, details: { cached_tokens: 1 } };
  const result = extended(base, { completion_tokens: 5, total_cost: 0.25 });
  assert.deepEqual(result, { prompt_tokens: 3, completion_tokens: 5, details: { cached_tokens: 1 }, total_cost: 0.25 });
  assert.deepEqual(Object.keys(result), ['prompt_tokens', 'completion_tokens', 'details', 'total_cost']);
  assert.equal(JSON.stringify(result), JSON.stringify({ ...base, completion_tokens: 5, total_cost: 0.25 }));
  // A copy: neither input changes, nested objects are shared as a spread shares them.
  assert.deepEqual(base, { prompt_tokens: 3, completion_tokens: 4, details: { cached_tokens: 1 } });
  assert.equal(result.details, base.details);
});
