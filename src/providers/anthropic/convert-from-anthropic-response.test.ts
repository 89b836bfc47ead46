import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { tokenUsageFromChat } from '../../features/inference/usage.ts';
import { anthropicMessageSchema } from './anthropic-api-schemas.ts';
import { convertAnthropicUsage, convertFromAnthropicResponse } from './convert-from-anthropic-response.ts';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8'));
const CREATED = 1_762_000_000;

describe('non-stream message → chat completion', () => {
  test('a text answer cut by a stop sequence', () => {
    const response = convertFromAnthropicResponse(anthropicMessageSchema.parse(fixture('anthropic-text.json')), CREATED);
    assert.deepEqual(response, {
      id: 'msg_01Sim0000000000000000001',
      object: 'chat.completion',
      created: CREATED,
      model: 'claude-sonnet-4-5-20250929',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: 'Simulated reply to: Say hello to the world alpha bravo ', refusal: null },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 14, total_tokens: 24, prompt_tokens_details: { cached_tokens: 0 } },
    });
  });

  test('thinking is dropped; a tool_use block becomes a tool call with JSON-string arguments and null content', () => {
    const response = convertFromAnthropicResponse(anthropicMessageSchema.parse(fixture('anthropic-thinking-tool-use.json')), CREATED);
    const choice = response.choices[0];
    assert.equal(choice?.finish_reason, 'tool_calls');
    assert.deepEqual(choice?.message, {
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 'toolu_01Sim0000000000000000002', type: 'function', function: { name: 'get_weather', arguments: '{"city":"sample","unit":"celsius"}' } }],
    });
    assert.equal(response.usage?.completion_tokens, 23);
  });

  test('several text blocks are joined and kept beside tool calls; unknown block types are skipped', () => {
    const message = anthropicMessageSchema.parse({
      id: 'msg_1',
      model: 'claude-haiku-4-5-20251001',
      content: [
        { type: 'text', text: 'Let me check. ' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        { type: 'text', text: 'Calling the tool.' },
        { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 6 },
    });
    const reply = convertFromAnthropicResponse(message, CREATED).choices[0]?.message;
    assert.equal(reply?.content, 'Let me check. Calling the tool.');
    assert.deepEqual(reply?.tool_calls, [{ id: 'toolu_1', type: 'function', function: { name: 'now', arguments: '{}' } }]);
  });
});

describe('usage', () => {
  test('prompt_tokens includes cache reads and writes; each kind is carried for pricing', () => {
    const usage = convertAnthropicUsage({
      input_tokens: 21,
      output_tokens: 393,
      cache_creation_input_tokens: 500,
      cache_read_input_tokens: 188_086,
      cache_creation: { ephemeral_5m_input_tokens: 200, ephemeral_1h_input_tokens: 300 },
    });
    assert.deepEqual(usage, {
      prompt_tokens: 21 + 500 + 188_086,
      completion_tokens: 393,
      total_tokens: 21 + 500 + 188_086 + 393,
      prompt_tokens_details: { cached_tokens: 188_086 },
      cache_creation_input_tokens: 500,
      cache_creation_1h_input_tokens: 300,
    });
  });

  test('the gateway pricing reads back exactly the vendor split (usage.ts subtracts the cache tokens again)', () => {
    const usage = convertAnthropicUsage({
      input_tokens: 9,
      output_tokens: 16,
      cache_creation_input_tokens: 578,
      cache_read_input_tokens: 300,
      cache_creation: { ephemeral_5m_input_tokens: 270, ephemeral_1h_input_tokens: 308 },
    });
    assert.deepEqual(tokenUsageFromChat(usage), { inputTokens: 9, outputTokens: 16, cacheReadTokens: 300, cacheWriteTokens: 270, cacheWrite1hTokens: 308 });
  });

  test('missing and null cache fields count as zero and are not reported', () => {
    assert.deepEqual(convertAnthropicUsage({ input_tokens: 3, output_tokens: 4, cache_creation_input_tokens: null, cache_creation: null }), {
      prompt_tokens: 3,
      completion_tokens: 4,
      total_tokens: 7,
      prompt_tokens_details: { cached_tokens: 0 },
    });
  });
});
