import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scrubVendorText } from './scrub-vendor-text.ts';

test('account identifiers in vendor error text are replaced by their kind', () => {
  const cases: Array<[string, string]> = [
    ['Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.', 'Incorrect API key provided: sk-***. You can find your API key at https://platform.openai.com/account/api-keys.'],
    ['Incorrect API key provided: sk-proj-AbC123******************************wXyZ.', 'Incorrect API key provided: sk-***.'],
    ['Rate limit reached for gpt-4o in organization org-AbCdEf123456 on tokens per min (TPM)', 'Rate limit reached for gpt-4o in organization org-*** on tokens per min (TPM)'],
    ['Project proj_Xy12Ab34Cd56 does not have access to model gpt-5', 'Project proj_*** does not have access to model gpt-5'],
    ['invalid x-api-key sk-ant-api03-abcDEF_123-xyz', 'invalid x-api-key sk-ant-***'],
    ['Your organization 6b1f2c3d-1a2b-4c5d-8e9f-0a1b2c3d4e5f has been disabled.', 'Your organization *** has been disabled.'],
  ];
  for (const [input, expected] of cases) assert.equal(scrubVendorText(input), expected);
});

test('text without identifiers is returned unchanged, model names and plain words included', () => {
  const text = '{"error":{"message":"max_tokens: must be at most 8192 for claude-sonnet-4-5","type":"invalid_request_error"}}';
  assert.equal(scrubVendorText('messages: at least one message is required'), 'messages: at least one message is required');
  assert.equal(scrubVendorText(text), text);
});

test('an Anthropic body keeps valid JSON after scrubbing its request id', () => {
  const body = JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'bad' }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' });
  assert.deepEqual(JSON.parse(scrubVendorText(body)), { type: 'error', error: { type: 'invalid_request_error', message: 'bad' }, request_id: 'req_***' });
});
