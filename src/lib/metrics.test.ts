import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Histogram, Registry } from 'prom-client';
import { Metrics, TalliedHistogram } from './metrics.ts';

test('tallied counters: exact sums per series, labels in their declared order, the same on every scrape', async () => {
  const metrics = new Metrics('USD');
  metrics.countTokens('gpt-a', 10, 5);
  metrics.countTokens('gpt-b', 7, 0);
  metrics.countTokens('gpt-a', 3, 2);
  metrics.countCharged(0.25);
  metrics.countCharged(0.5);
  const route = metrics.requests.series('chat.completions', '200');
  route.value += 1;
  metrics.requests.series('chat.completions', '200').value += 1;
  metrics.requests.series('messages', '429').value += 1;
  for (let scrape = 0; scrape < 2; scrape++) {
    const text = await metrics.registry.metrics();
    assert.match(text, /^tollgate_tokens_total\{model="gpt-a",direction="input"\} 13$/m);
    assert.match(text, /^tollgate_tokens_total\{model="gpt-a",direction="output"\} 7$/m);
    assert.match(text, /^tollgate_tokens_total\{model="gpt-b",direction="input"\} 7$/m);
    assert.doesNotMatch(text, /model="gpt-b",direction="output"/, 'a series never counted is not shown');
    assert.match(text, /^tollgate_money_charged_total\{currency="USD"\} 0\.75$/m);
    assert.match(text, /^tollgate_http_requests_total\{route="chat\.completions",status="200"\} 2$/m);
    assert.match(text, /^tollgate_http_requests_total\{route="messages",status="429"\} 1$/m);
    assert.match(text, /^# TYPE tollgate_http_requests_total counter$/m);
  }
});

test('tallied histograms: the same exposition as a prom-client histogram fed the same observations, reset included', async () => {
  const buckets = [0.001, 0.01, 0.1, 1];
  const observations: Array<[string, string, number]> = [
    ['openai', 'chat', 0.0004],
    ['openai', 'chat', 0.001],
    ['openai', 'chat', 0.05],
    ['anthropic', 'messages', 2.5],
    ['openai', 'chat', 0.3],
  ];
  const ours = new Registry();
  const theirs = new Registry();
  const tallied = new TalliedHistogram(ours, 'upstream_seconds', 'Time to the vendor', ['provider', 'operation'], buckets);
  const reference = new Histogram({ name: 'upstream_seconds', help: 'Time to the vendor', labelNames: ['provider', 'operation'], buckets, registers: [theirs] });
  tallied.labels('never', 'observed');
  for (const [provider, operation, seconds] of observations) {
    tallied.labels(provider, operation).observe(seconds);
    reference.observe({ provider, operation }, seconds);
  }
  const text = await ours.metrics();
  assert.equal(text, await theirs.metrics());
  assert.match(text, /^upstream_seconds_bucket\{le="0.01",provider="openai",operation="chat"\} 2$/m);
  assert.match(text, /^upstream_seconds_bucket\{le="\+Inf",provider="anthropic",operation="messages"\} 1$/m);
  assert.match(text, /^upstream_seconds_count\{provider="openai",operation="chat"\} 4$/m);
  assert.doesNotMatch(text, /never/, 'a series never observed is not shown');
  ours.resetMetrics();
  theirs.resetMetrics();
  tallied.labels('openai', 'chat').observe(0.02);
  reference.observe({ provider: 'openai', operation: 'chat' }, 0.02);
  assert.equal(await ours.metrics(), await theirs.metrics());
});
