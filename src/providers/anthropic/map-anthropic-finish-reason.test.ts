import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';

test('every Anthropic stop_reason maps to an OpenAI finish_reason', () => {
  const expected = {
    end_turn: 'stop',
    stop_sequence: 'stop',
    pause_turn: 'stop',
    max_tokens: 'length',
    model_context_window_exceeded: 'length',
    tool_use: 'tool_calls',
    refusal: 'content_filter',
  };
  for (const [reason, finish] of Object.entries(expected)) assert.equal(mapAnthropicFinishReason(reason), finish, reason);
});

test('a missing or future stop_reason is a plain stop', () => {
  assert.equal(mapAnthropicFinishReason(null), 'stop');
  assert.equal(mapAnthropicFinishReason(undefined), 'stop');
  assert.equal(mapAnthropicFinishReason('something_new'), 'stop');
});
