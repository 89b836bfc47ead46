import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completeModel, modelSchema } from '../catalog/model.ts';
import { emptyUsage, priceUsage } from './pricing.ts';

const model = (extra: Record<string, unknown> = {}) =>
  completeModel(modelSchema.parse({ id: 'm', kind: 'chat', provider: 'anthropic', cost_context: '0.0030', cost_completion: '0.0150', ...extra }), 'anthropic', 0);

test('prompt and completion are priced per 1,000 tokens and add up to the total', () => {
  const cost = priceUsage(model(), { ...emptyUsage(), inputTokens: 1000, outputTokens: 2000 });
  assert.equal(cost.prompt, 3_000_000n);
  assert.equal(cost.completion, 30_000_000n);
  assert.equal(cost.total, cost.prompt + cost.completion);
});

test('cache reads cost 0.1×, writes 1.25× and 1-hour writes 2× the input price by default', () => {
  const cost = priceUsage(model(), { ...emptyUsage(), cacheReadTokens: 1000, cacheWriteTokens: 1000, cacheWrite1hTokens: 1000 });
  // 0.0003 + 0.00375 + 0.006
  assert.equal(cost.prompt, 10_050_000n);
});

test('a model pricing entry overrides the derived cache prices', () => {
  const cost = priceUsage(model({ pricing: { cache_read: '0.0005' } }), { ...emptyUsage(), cacheReadTokens: 2000 });
  assert.equal(cost.prompt, 1_000_000n);
});

test('the prompt part is rounded once, not per kind of token', () => {
  // 1 token at 0.0030 = 0.000003 and 1 cached read at 0.0003 = 0.0000003: 0.0000033 → 0.000003
  const cost = priceUsage(model(), { ...emptyUsage(), inputTokens: 1, cacheReadTokens: 1 });
  assert.equal(cost.prompt, 3_000n);
});
