import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ChatChunk, JsonObject } from '../../core/chat-types.ts';
import { ResponsesStreamRenderer } from './responses-stream.ts';

const chunk = (delta: JsonObject, finish: string | null = null): ChatChunk => ({
  id: 'msg_1',
  object: 'chat.completion.chunk',
  model: 'claude',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

test('reasoning, text and a function call become three items in order; a length finish makes the response incomplete', () => {
  const renderer = new ResponsesStreamRenderer({ id: 'resp_1', createdAt: 1, model: 'claude-sonnet-4-5', request: { model: 'claude-sonnet-4-5' }, warnings: null });
  const events = [
    ...renderer.start(),
    ...renderer.chunk(chunk({ role: 'assistant', content: '' })),
    ...renderer.chunk(chunk({ reasoning_content: 'Think ' })),
    ...renderer.chunk(chunk({ reasoning_content: 'hard.' })),
    ...renderer.chunk(chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig' }] })),
    ...renderer.chunk(chunk({ content: 'Hello' })),
    ...renderer.chunk(chunk({ tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] })),
    ...renderer.chunk(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] })),
    ...renderer.chunk(chunk({}, 'length')),
  ];
  const { events: closing, response } = renderer.finish({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 4 } }, 3);
  const all = [...events, ...closing];
  assert.deepEqual(all.map((event) => event.sequence_number), all.map((_, index) => index));
  assert.deepEqual(all.map((event) => event.type), [
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.reasoning_summary_part.added',
    'response.reasoning_summary_text.delta',
    'response.reasoning_summary_text.delta',
    'response.reasoning_summary_text.done',
    'response.reasoning_summary_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.content_part.added',
    'response.output_text.delta',
    'response.output_text.done',
    'response.content_part.done',
    'response.output_item.done',
    'response.output_item.added',
    'response.function_call_arguments.delta',
    'response.function_call_arguments.done',
    'response.output_item.done',
    'response.incomplete',
  ]);
  const output = response.output as JsonObject[];
  assert.deepEqual(output.map((item) => item.type), ['reasoning', 'message', 'function_call']);
  assert.deepEqual(output[0]!.summary, [{ type: 'summary_text', text: 'Think hard.' }]);
  assert.equal(output[0]!.encrypted_content, 'sig');
  assert.equal(output[1]!.status, 'completed');
  assert.equal(output[2]!.status, 'incomplete', 'the answer was cut in its last item');
  assert.deepEqual([output[2]!.call_id, output[2]!.name, output[2]!.arguments], ['toolu_1', 'f', '{"a":1}']);
  assert.equal(response.status, 'incomplete');
  assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
  assert.deepEqual(response.usage, {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 4 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 3 },
    total_tokens: 30,
  });
});
