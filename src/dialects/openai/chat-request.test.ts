import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonShape } from '../../lib/json-depth.ts';
import { parseOrThrow } from '../validation.ts';
import { chatRequestSchema, passThroughBody, toChatRequest } from './chat-request.ts';

/** A body using every kind of field the schema knows, each with a value it keeps. */
const FULL = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'be brief', name: 'setup' },
    { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } }], extra_field: { kept: true } },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    { role: 'tool', content: '42', tool_call_id: 'call_1' },
  ],
  max_completion_tokens: 100,
  max_tokens: 100,
  temperature: 0.5,
  top_p: 0.9,
  n: 2,
  stop: ['\n'],
  presence_penalty: -1,
  frequency_penalty: 1,
  logit_bias: { '50256': -100 },
  logprobs: true,
  top_logprobs: 3,
  seed: 7,
  user: 'u',
  safety_identifier: 's',
  response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
  tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} }, strict: true } }],
  tool_choice: { type: 'function', function: { name: 'f' } },
  parallel_tool_calls: false,
  functions: [{ name: 'old' }],
  function_call: 'auto',
  reasoning_effort: 'low',
  verbosity: 'low',
  service_tier: 'default',
  stream: false,
  stream_options: { include_usage: true },
  store: false,
  metadata: { a: 'b' },
  prompt_cache_key: 'k',
  prompt_cache_retention: '24h',
  modalities: ['text'],
  audio: { voice: 'alloy', format: 'mp3' },
  prediction: { type: 'content', content: 'x' },
  web_search_options: { search_context_size: 'low' },
};

test('the chat schema checks and never transforms: a body with nothing to drop comes out as it went in', () => {
  // passThroughBody sends the client's bytes for the request object: that holds only while this is true.
  const { request } = toChatRequest(parseOrThrow(chatRequestSchema, JSON.parse(JSON.stringify(FULL))));
  assert.deepEqual(request, FULL);
});

test('passThroughBody gives the client bytes only when every key written, at any depth, was kept, once', () => {
  const verdict = (text: string): boolean => {
    const { request } = toChatRequest(parseOrThrow(chatRequestSchema, JSON.parse(text)));
    return passThroughBody({ bytes: Buffer.from(text), keys: jsonShape(text, 64).keys }, request) !== undefined;
  };
  assert.equal(verdict(JSON.stringify(FULL)), true, 'every field kept');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}]}'), true);
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}],"model":"b"}'), false, 'a key written twice');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}],"unknown":1}'), false, 'an unknown key');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}],"stop":null}'), false, 'a null');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}],"useWalletBalance":true}'), false, 'the gateway’s own field');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","role":"system","content":"x"}]}'), false, 'a key written twice in a message');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","name":"g"}}]}'), false, 'a key written twice deep in a tool');
  assert.equal(verdict('{"model":"a","messages":[{"role":"user","content":[{"type":"text","text":"x","extra":{"k":1}}]}]}'), true, 'keys the schema does not name, below the top level, are kept');
  assert.equal(passThroughBody(undefined, { model: 'a', messages: [] }), undefined, 'no bytes kept');
});
