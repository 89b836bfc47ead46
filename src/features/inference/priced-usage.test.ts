import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatUsage } from '../../core/chat-types.ts';
import { pricedUsageText, withCosts } from './priced-usage.ts';

const cost = { prompt: 1_250_000n, completion: 30_000_000n, total: 31_250_000n };

test('pricedUsageText: the vendor usage text with the costs written in equals the serialised priced usage', () => {
  const texts = [
    '{"prompt_tokens":12,"completion_tokens":40,"total_tokens":52,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":0}}',
    '{\n    "prompt_tokens": 3,\n    "completion_tokens": 5,\n    "total_tokens": 8\n  }',
    '{}',
    '{ }',
    // A field of the vendor's named like a cost: the gateway's cost replaces it, in its place.
    '{"prompt_tokens":1,"total_cost":99,"completion_tokens":2}',
  ];
  for (const text of texts) {
    const usage = JSON.parse(text) as ChatUsage;
    const priced = pricedUsageText(text, usage, cost);
    const expected = withCosts(usage, cost);
    assert.deepEqual(JSON.parse(priced), expected, text);
    assert.deepEqual(Object.keys(JSON.parse(priced)), Object.keys(expected), text);
  }
  assert.equal(pricedUsageText('{}', {} as ChatUsage, cost), '{"prompt_cost":0.00125,"completion_cost":0.03,"total_cost":0.03125}');
  assert.equal(
    pricedUsageText('{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}', { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 }, cost),
    '{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8,"prompt_cost":0.00125,"completion_cost":0.03,"total_cost":0.03125}',
  );
});
