import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../core/chat-types.ts';
import { GatewayError } from '../../core/errors.ts';
import { outputItemsFromChat } from './responses-render.ts';
import type { ResponsesRequest } from './responses-request.ts';
import { inputItems, responsesToChat } from './responses-to-chat.ts';

const MODEL = 'claude-sonnet-4-5';
const translate = (request: Omit<ResponsesRequest, 'model'>, history: JsonObject[] = []) => {
  const full = { model: MODEL, ...request } as ResponsesRequest;
  return responsesToChat(full, history, inputItems(full.input), 'claude-upstream');
};
const paramOf = (run: () => unknown): string | null | undefined => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof GatewayError, String(error));
    return error.param;
  }
  return assert.fail('expected a 400');
};
const schema = { type: 'object', properties: { target: { type: 'string' } } };

test('a namespace tool becomes function tools named <namespace>__<name>; the call maps back to name + namespace', () => {
  const { chat, toolNames, skippedTools } = translate({
    input: 'Hi',
    tools: [
      { type: 'namespace', name: 'multi_agent_v1', description: 'Sub-agents.', tools: [{ type: 'function', name: 'close_agent', parameters: schema }] },
      { type: 'web_search', external_web_access: false },
      { type: 'function', name: 'exec_command', parameters: schema },
    ],
  });
  assert.deepEqual(chat.tools, [
    { type: 'function', function: { name: 'multi_agent_v1__close_agent', parameters: schema, description: 'Part of multi_agent_v1: Sub-agents.' } },
    { type: 'function', function: { name: 'exec_command', parameters: schema } },
  ]);
  assert.deepEqual(skippedTools, ['web_search']);
  const [item] = outputItemsFromChat({ role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'multi_agent_v1__close_agent', arguments: '{}' } }] }, 'tool_calls', toolNames);
  assert.deepEqual({ ...item, id: undefined }, { id: undefined, type: 'function_call', status: 'completed', arguments: '{}', call_id: 'toolu_1', name: 'close_agent', namespace: 'multi_agent_v1' });
});

test('a namespaced function_call and custom tool items sent back reach Claude as tool_use under the flat name', () => {
  const { chat } = translate({
    input: [
      { role: 'user', content: 'Go' },
      { type: 'function_call', call_id: 'toolu_1', name: 'close_agent', namespace: 'multi_agent_v1', arguments: '{}' },
      { type: 'function_call_output', call_id: 'toolu_1', output: 'closed' },
      { type: 'custom_tool_call', call_id: 'toolu_2', name: 'apply_patch', input: '*** Begin Patch' },
      { type: 'custom_tool_call_output', call_id: 'toolu_2', output: 'done' },
    ],
  });
  assert.deepEqual(chat.messages.slice(1), [
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'multi_agent_v1__close_agent', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'toolu_1', content: 'closed' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"*** Begin Patch"}' } }] },
    { role: 'tool', tool_call_id: 'toolu_2', content: 'done' },
  ]);
});

test('a custom tool is a function with one string input; the call comes back as custom_tool_call with the text', () => {
  const { chat, toolNames } = translate({ input: 'Hi', tools: [{ type: 'custom', name: 'apply_patch', description: 'Patch.' }], tool_choice: { type: 'custom', name: 'apply_patch' } });
  assert.deepEqual(chat.tools, [
    {
      type: 'function',
      function: {
        name: 'apply_patch',
        description: 'Patch.',
        parameters: { type: 'object', properties: { input: { type: 'string', description: 'The raw text input of the tool.' } }, required: ['input'], additionalProperties: false },
      },
    },
  ]);
  assert.deepEqual(chat.tool_choice, { type: 'function', function: { name: 'apply_patch' } });
  const [item] = outputItemsFromChat({ role: 'assistant', content: null, tool_calls: [{ id: 'toolu_9', type: 'function', function: { name: 'apply_patch', arguments: '{"input":"diff"}' } }] }, 'tool_calls', toolNames);
  assert.equal(item?.type, 'custom_tool_call');
  assert.match(String(item?.id), /^ctc_/);
  assert.deepEqual([item?.name, item?.input, item?.call_id, 'namespace' in (item ?? {})], ['apply_patch', 'diff', 'toolu_9', false]);
});

test('hosted tools: skipped when offered, a 400 on tool_choice when forced or when nothing else is left to require', () => {
  assert.deepEqual(translate({ input: 'Hi', tools: [{ type: 'web_search_preview' }, { type: 'code_interpreter' }] }).skippedTools, ['web_search_preview', 'code_interpreter']);
  assert.equal(translate({ input: 'Hi', tools: [{ type: 'web_search' }] }).chat.tools, undefined);
  assert.equal(paramOf(() => translate({ input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })), 'tool_choice');
  assert.equal(paramOf(() => translate({ input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: 'required' })), 'tool_choice');
  assert.equal(paramOf(() => translate({ input: 'Hi', tools: [{ type: 'local_shell' }] })), 'tools[0]');
  assert.equal(paramOf(() => translate({ input: 'Hi', tools: [{ type: 'function', name: 'a__b' }, { type: 'namespace', name: 'a', tools: [{ type: 'function', name: 'b' }] }] })), 'tools[1].tools[0]');
});

test('item_reference: the stored item of the chain, else a 400 naming input[i].id', () => {
  const history: JsonObject[] = [
    { type: 'message', role: 'user', content: 'Remember teal.' },
    { id: 'msg_7', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Noted.', annotations: [] }] },
  ];
  const { chat } = translate({ previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'msg_7' }, { role: 'user', content: 'Which?' }] }, history);
  assert.deepEqual(chat.messages.slice(2), [{ role: 'assistant', content: 'Noted.' }, { role: 'user', content: 'Which?' }]);
  assert.equal(paramOf(() => translate({ previous_response_id: 'resp_1', input: [{ type: 'item_reference', id: 'msg_8' }] }, history)), 'input[0].id');
  assert.equal(paramOf(() => translate({ input: [{ id: 'msg_7' }] })), 'input[0].id');
});
