import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatMessage, ChatRequest } from '../../core/chat-types.ts';
import { GatewayError } from '../../core/errors.ts';
import { anthropicToolChoice, convertToAnthropicMessages, DEFAULT_ANTHROPIC_MAX_TOKENS } from './convert-to-anthropic-messages.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
const chat = (messages: ChatMessage[], extra: Record<string, unknown> = {}): ChatRequest => ({ model: MODEL, messages, ...extra });
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** Fields the Messages API accepts on create (PROTOCOLS §1.2); anything else is a vendor 400. */
const ANTHROPIC_FIELDS = new Set(['model', 'max_tokens', 'messages', 'system', 'metadata', 'stream', 'stop_sequences', 'temperature', 'top_p', 'tools', 'tool_choice', 'output_config']);

function rejects(request: ChatRequest, code: GatewayError['code'], message: RegExp): void {
  assert.throws(
    () => convertToAnthropicMessages(request),
    (error: unknown) => error instanceof GatewayError && error.code === code && message.test(error.message),
  );
}

describe('system and developer messages', () => {
  test('become the system prompt, in order, wherever they stand; no system role reaches Anthropic', () => {
    const body = convertToAnthropicMessages(
      chat([
        { role: 'system', content: 'Be terse.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
      ]),
    );
    assert.deepEqual(body.system, [
      { type: 'text', text: 'Be terse.' },
      { type: 'text', text: 'Answer in French.' },
    ]);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  test('no system field without system messages', () => {
    assert.equal('system' in convertToAnthropicMessages(chat([{ role: 'user', content: 'Hi' }])), false);
  });
});

describe('user content', () => {
  test('text and images: a data URL becomes a base64 source, an http(s) URL a url source', () => {
    const body = convertToAnthropicMessages(
      chat([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}`, detail: 'low' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
      ]),
    );
    assert.deepEqual(body.messages[0]?.content, [
      { type: 'text', text: 'What is in these?' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    ]);
  });

  test('a PDF file given as a data URL becomes a document block', () => {
    const body = convertToAnthropicMessages(
      chat([{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }] }]),
    );
    assert.deepEqual(body.messages[0]?.content, [
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
    ]);
  });

  test('content Anthropic cannot take is refused with a 400 naming the part', () => {
    rejects(chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AAAA' } }] }]), 'invalid_request', /messages\[0\]\.content\[0\]\.image_url\.url: image type 'image\/bmp'/);
    rejects(chat([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://example.com/a.png' } }] }]), 'invalid_request', /must be an http\(s\) URL or a base64 data: URL/);
    rejects(chat([{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }]), 'invalid_request', /messages\[0\]\.content\[0\]: content parts of type 'input_audio'/);
    rejects(chat([{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }]), 'invalid_request', /only PDF files/);
  });

  test('consecutive user messages are merged into one turn; empty text is left out', () => {
    const body = convertToAnthropicMessages(chat([{ role: 'user', content: 'One' }, { role: 'user', content: '' }, { role: 'user', content: 'Two' }]));
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'One' }, { type: 'text', text: 'Two' }] }]);
  });
});

describe('tool calls and results', () => {
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'Weather in Paris and Rome?' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
    { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '24°C' }] },
    { role: 'user', content: 'Which is warmer?' },
  ];

  test('assistant tool_calls become tool_use blocks; tool messages one user turn of tool_result blocks, then the text', () => {
    const body = convertToAnthropicMessages(chat(conversation, { tools: [weatherTool] }));
    assert.deepEqual(body.messages, [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '24°C' }] },
          { type: 'text', text: 'Which is warmer?' },
        ],
      },
    ]);
  });

  test('tool call arguments that are not a JSON object are refused', () => {
    const bad: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '[1,2]' } }] },
    ];
    rejects(chat(bad), 'invalid_request', /messages\[1\]\.tool_calls\[0\]\.function\.arguments: must be a JSON object/);
  });

  test('legacy function messages are refused', () => {
    rejects(chat([{ role: 'function', name: 'f', content: 'x' }]), 'invalid_request', /messages\[0\]\.role/);
  });

  test('tools become {name, description, input_schema}; a tool without parameters gets an empty object schema', () => {
    const body = convertToAnthropicMessages(
      chat([{ role: 'user', content: 'Hi' }], { tools: [weatherTool, { type: 'function', function: { name: 'now', strict: true } }] }),
    );
    assert.deepEqual(body.tools, [
      { name: 'get_weather', description: 'Current weather for a city', input_schema: weatherTool.function.parameters },
      { name: 'now', input_schema: { type: 'object', properties: {} }, strict: true },
    ]);
  });

  test('tools other than functions are refused as unsupported tools', () => {
    rejects(chat([{ role: 'user', content: 'Hi' }], { tools: [{ type: 'custom', custom: { name: 'grammar' } }] }), 'unsupported_tool', /tools\[0\]: tools of type 'custom'/);
  });

  test('tool_choice auto/none/required/function → auto/none/any/tool; parallel_tool_calls:false disables parallel use', () => {
    assert.deepEqual(anthropicToolChoice('auto', false), { type: 'auto' });
    assert.deepEqual(anthropicToolChoice('none', true), { type: 'none' });
    assert.deepEqual(anthropicToolChoice('required', false), { type: 'any' });
    assert.deepEqual(anthropicToolChoice({ type: 'function', function: { name: 'get_weather' } }, false), { type: 'tool', name: 'get_weather' });
    assert.deepEqual(anthropicToolChoice('required', true), { type: 'any', disable_parallel_tool_use: true });
    assert.deepEqual(anthropicToolChoice(undefined, true), { type: 'auto', disable_parallel_tool_use: true });
    assert.equal(anthropicToolChoice(undefined, false), undefined);
    const body = convertToAnthropicMessages(chat([{ role: 'user', content: 'Hi' }], { tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'get_weather' } }, parallel_tool_calls: false }));
    assert.deepEqual(body.tool_choice, { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true });
  });

  test('tool_choice without tools is dropped (Anthropic refuses it)', () => {
    const body = convertToAnthropicMessages(chat([{ role: 'user', content: 'Hi' }], { tool_choice: 'none', parallel_tool_calls: false }));
    assert.equal('tools' in body, false);
    assert.equal('tool_choice' in body, false);
  });
});

describe('settings', () => {
  test('max_completion_tokens wins over max_tokens; 4096 when neither is set', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    assert.equal(convertToAnthropicMessages(chat(messages, { max_completion_tokens: 50, max_tokens: 70 })).max_tokens, 50);
    assert.equal(convertToAnthropicMessages(chat(messages, { max_tokens: 70 })).max_tokens, 70);
    assert.equal(convertToAnthropicMessages(chat(messages)).max_tokens, DEFAULT_ANTHROPIC_MAX_TOKENS);
    assert.equal(DEFAULT_ANTHROPIC_MAX_TOKENS, 4096);
  });

  test('stop → stop_sequences; sampling, user and json_schema carried over', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    const body = convertToAnthropicMessages(
      chat([{ role: 'user', content: 'Hi' }], {
        stop: 'END',
        temperature: 0.2,
        top_p: 0.9,
        user: 'user-42',
        response_format: { type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } },
      }),
    );
    assert.deepEqual(body.stop_sequences, ['END']);
    assert.equal(body.temperature, 0.2);
    assert.equal(body.top_p, 0.9);
    assert.deepEqual(body.metadata, { user_id: 'user-42' });
    assert.deepEqual(body.output_config, { format: { type: 'json_schema', schema } });
    assert.deepEqual(convertToAnthropicMessages(chat([{ role: 'user', content: 'Hi' }], { stop: ['a', 'b'] })).stop_sequences, ['a', 'b']);
    assert.deepEqual(convertToAnthropicMessages(chat([{ role: 'user', content: 'Hi' }], { safety_identifier: 'sid-1' })).metadata, { user_id: 'sid-1' });
  });

  test('settings Anthropic lacks are dropped: only Messages API fields are sent', () => {
    const body = convertToAnthropicMessages(
      chat([{ role: 'user', content: 'Hi', name: 'alice' }], {
        stream: true,
        stream_options: { include_usage: true },
        n: 1,
        presence_penalty: 0.5,
        frequency_penalty: 0.5,
        logit_bias: { '50256': -100 },
        logprobs: true,
        seed: 7,
        response_format: { type: 'json_object' },
        reasoning_effort: 'low',
        service_tier: 'auto',
        store: true,
        metadata: { trace: 'x' },
        prompt_cache_key: 'k',
      }),
    );
    for (const field of Object.keys(body)) assert.ok(ANTHROPIC_FIELDS.has(field), `unexpected field ${field}`);
    assert.equal(body.stream, true);
    assert.deepEqual(body.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });
});

describe('reasoning (set only by the Responses translation)', () => {
  test('effort becomes a thinking budget; the answer keeps its default room; sampling settings give way', () => {
    const body = convertToAnthropicMessages(chat([{ role: 'user', content: 'Think' }], { reasoning: { effort: 'medium' }, temperature: 0.2, top_p: 0.5 }));
    assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 4096 });
    assert.equal(body.max_tokens, DEFAULT_ANTHROPIC_MAX_TOKENS + 4096);
    assert.equal(body.temperature, undefined);
    assert.equal(body.top_p, undefined);
  });

  test('no thinking when the output limit leaves no room for the minimum budget, or when a tool is forced', () => {
    const small = convertToAnthropicMessages(chat([{ role: 'user', content: 'Think' }], { reasoning: { effort: 'high' }, max_completion_tokens: 1000 }));
    assert.equal(small.thinking, undefined);
    const capped = convertToAnthropicMessages(chat([{ role: 'user', content: 'Think' }], { reasoning: { effort: 'high' }, max_completion_tokens: 2000 }));
    assert.deepEqual(capped.thinking, { type: 'enabled', budget_tokens: 1999 });
    const forced = convertToAnthropicMessages(chat([{ role: 'user', content: 'Think' }], { reasoning: { effort: 'low' }, tools: [weatherTool], tool_choice: 'required' }));
    assert.equal(forced.thinking, undefined);
  });

  test('thinking blocks of an assistant turn go first, merged with the turn that follows', () => {
    const body = convertToAnthropicMessages(
      chat([
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: null, thinking_blocks: [{ type: 'thinking', thinking: 'Use the tool.', signature: 'sig' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      ]),
    );
    assert.deepEqual(body.messages[1], {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Use the tool.', signature: 'sig' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } },
      ],
    });
  });
});
