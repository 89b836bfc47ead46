import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from './metrics.ts';

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
