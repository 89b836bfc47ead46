import assert from 'node:assert/strict';
import { test } from 'node:test';
import { UpstreamError } from '../upstream-error.ts';
import { toCanonicalUpstreamError } from './anthropic-error.ts';

test('an Anthropic error body becomes an OpenAI error body; status, kind and retryability stay', () => {
  const vendor = new UpstreamError(
    429,
    JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'Slow down.' }, request_id: 'req_1' }),
    'application/json',
    'upstream answered 429',
  );
  const converted = toCanonicalUpstreamError(vendor);
  assert.ok(converted instanceof UpstreamError);
  assert.equal(converted.status, 429);
  assert.equal(converted.kind, 'http');
  assert.equal(converted.retryable, true);
  assert.deepEqual(JSON.parse(converted.body), { error: { message: 'Slow down.', type: 'rate_limit_error', param: null, code: null } });
});

test('anything else is left as it came', () => {
  const html = new UpstreamError(502, '<html>Bad gateway</html>', 'text/html', 'upstream answered 502');
  assert.equal(toCanonicalUpstreamError(html), html);
  const timeout = new UpstreamError(504, '', 'text/plain', 'upstream timed out', 'timeout');
  assert.equal(toCanonicalUpstreamError(timeout), timeout);
  const other = new Error('boom');
  assert.equal(toCanonicalUpstreamError(other), other);
});
