import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { generateText, streamText } from 'ai';
import {
  anthropicPromptTokens,
  countTokens,
  replyText,
  startSimulator,
  thinkingText,
  toolResultReplyText,
  type Simulator,
} from './server.ts';

let simulator: Simulator;
let client: Anthropic;

before(async () => {
  simulator = await startSimulator();
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: simulator.url, maxRetries: 0 });
});
after(() => simulator.close());
beforeEach(() => simulator.reset());

const model = 'claude-sonnet-4-6';
const weatherTool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city', 'unit'] },
};

describe('messages', () => {
  it('creates a deterministic message with vendor usage and headers', async () => {
    const { data: message, response } = await client.messages
      .create({ model, max_tokens: 100, system: 'Be kind.', messages: [{ role: 'user', content: 'Hello Claude' }] })
      .withResponse();
    assert.match(message.id, /^msg_01/);
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, model);
    assert.equal(message.stop_reason, 'end_turn');
    assert.deepEqual(message.content, [{ type: 'text', text: replyText('Hello Claude', 16) }]);
    assert.equal(message.usage.input_tokens, countTokens('Be kind.') + countTokens('Hello Claude'));
    assert.equal(message.usage.output_tokens, 16);
    assert.equal(message.usage.cache_creation_input_tokens, 0);
    assert.equal(message.usage.cache_read_input_tokens, 0);
    assert.equal(message.usage.service_tier, 'standard');
    assert.match(response.headers.get('request-id') ?? '', /^req_/);
    const recorded = simulator.lastRequest('/v1/messages');
    assert.match(recorded?.headers['anthropic-version'] ?? '', /^\d{4}-\d{2}-\d{2}$/);
    // This SDK version sends the API key as a bearer token; the simulator accepts both forms.
    assert.ok(recorded?.headers['x-api-key'] === 'sk-ant-test' || recorded?.headers.authorization === 'Bearer sk-ant-test');
  });

  it('streams the same message; finalMessage usage equals the non-stream usage', async () => {
    const body = { model, max_tokens: 200, messages: [{ role: 'user' as const, content: 'Write a haiku about rain' }] };
    const plain = await client.messages.create(body);
    const final = await client.messages.stream(body).finalMessage();
    assert.deepEqual(final.usage, plain.usage);
    assert.equal(final.stop_reason, plain.stop_reason);
    assert.equal(final.content[0]?.type === 'text' ? final.content[0].text : '', plain.content[0]?.type === 'text' ? plain.content[0].text : 'x');
    const response = await fetch(`${simulator.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
    });
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = [...(await response.text()).matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    assert.deepEqual(events, [
      'message_start', 'content_block_start', 'ping', ...Array<string>(8).fill('content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
    ]);
  });

  it('starts with a thinking block when thinking is on, streamed with signature', async () => {
    const body = { model, max_tokens: 4000, thinking: { type: 'enabled' as const, budget_tokens: 2048 }, messages: [{ role: 'user' as const, content: 'Think!' }] };
    const plain = await client.messages.create(body);
    assert.equal(plain.content[0]?.type, 'thinking');
    assert.equal(plain.content[0]?.type === 'thinking' ? plain.content[0].thinking : '', thinkingText('Think!'));
    assert.equal(plain.usage.output_tokens, countTokens(thinkingText('Think!')) + 16);
    const final = await client.messages.stream(body).finalMessage();
    assert.deepEqual(final.content, plain.content.map((block) => (block.type === 'text' ? { type: 'text', text: block.text } : block)));
    assert.deepEqual(final.usage, plain.usage);
  });

  it('fills structured output from the schema and hides omitted thinking', async () => {
    const structured = await client.messages.create({
      model,
      max_tokens: 100,
      output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
      messages: [{ role: 'user', content: 'json please' }],
    });
    assert.equal(structured.content[0]?.type === 'text' ? structured.content[0].text : '', '{"ok":true}');
    const omitted = await client.messages.create({ model, max_tokens: 100, thinking: { type: 'adaptive', display: 'omitted' }, messages: [{ role: 'user', content: 'Think!' }] });
    const thinking = omitted.content[0];
    assert.ok(thinking?.type === 'thinking');
    assert.equal(thinking.thinking, '');
    assert.ok(thinking.signature.length > 0);
    assert.equal(omitted.usage.output_tokens, countTokens(thinkingText('Think!')) + 16);
  });

  it('lists models in the Anthropic shape', async () => {
    const page = await client.models.list();
    assert.ok(page.data.length > 0);
    assert.equal(page.data[0]?.type, 'model');
  });

  it('answers with tool_use built from the schema, then text after a tool_result', async () => {
    const plain = await client.messages.create({ model, max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    assert.equal(plain.stop_reason, 'tool_use');
    const block = plain.content[0];
    assert.ok(block?.type === 'tool_use');
    assert.match(block.id, /^toolu_/);
    assert.deepEqual(block.input, { city: 'sample', unit: 'c' });
    assert.equal(plain.usage.input_tokens, anthropicPromptTokens({ tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] }));
    const streamed = await client.messages.stream({ model, max_tokens: 100, tools: [weatherTool], messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage();
    assert.deepEqual(streamed.content[0]?.type === 'tool_use' ? streamed.content[0].input : undefined, block.input);
    const answer = await client.messages.create({
      model,
      max_tokens: 100,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [block] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: block.id, content: 'Rainy, 12 C' }] },
      ],
    });
    assert.equal(answer.stop_reason, 'end_turn');
    assert.equal(answer.content[0]?.type === 'text' ? answer.content[0].text : '', toolResultReplyText('Rainy, 12 C'));
  });

  it('cuts at stop sequences and at max_tokens', async () => {
    const stopped = await client.messages.create({ model, max_tokens: 100, stop_sequences: ['charlie'], messages: [{ role: 'user', content: 'go' }] });
    assert.equal(stopped.stop_reason, 'stop_sequence');
    assert.equal(stopped.stop_sequence, 'charlie');
    assert.equal(stopped.content[0]?.type === 'text' ? stopped.content[0].text : '', 'Simulated reply to: go alpha bravo ');
    const capped = await client.messages.create({ model, max_tokens: 3, messages: [{ role: 'user', content: 'go' }] });
    assert.equal(capped.stop_reason, 'max_tokens');
    assert.equal(capped.usage.output_tokens, 3);
  });

  it('writes then reads the prompt cache, by TTL', async () => {
    const system = [{ type: 'text' as const, text: 'You are a patient tutor. '.repeat(100), cache_control: { type: 'ephemeral' as const } }];
    const systemTokens = countTokens(system[0]!.text);
    const first = await client.messages.create({ model, max_tokens: 50, system, messages: [{ role: 'user', content: 'Question one' }] });
    assert.equal(first.usage.cache_creation_input_tokens, systemTokens);
    assert.equal(first.usage.cache_creation?.ephemeral_5m_input_tokens, systemTokens);
    assert.equal(first.usage.cache_read_input_tokens, 0);
    assert.equal(first.usage.input_tokens, countTokens('Question one'));
    const second = await client.messages.create({ model, max_tokens: 50, system, messages: [{ role: 'user', content: 'Question two' }] });
    assert.equal(second.usage.cache_creation_input_tokens, 0);
    assert.equal(second.usage.cache_read_input_tokens, systemTokens);
    assert.equal(second.usage.input_tokens, countTokens('Question two'));

    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'A long document. '.repeat(50) }] }];
    const auto = await client.messages.create({ model, max_tokens: 50, messages, cache_control: { type: 'ephemeral', ttl: '1h' } });
    assert.equal(auto.usage.cache_creation?.ephemeral_1h_input_tokens, countTokens(messages[0]!.content[0]!.text));
    assert.equal(auto.usage.input_tokens, 0);
    const streamed = await client.messages.stream({ model, max_tokens: 50, messages, cache_control: { type: 'ephemeral', ttl: '1h' } }).finalMessage();
    assert.equal(streamed.usage.cache_read_input_tokens, countTokens(messages[0]!.content[0]!.text));
  });

  it('count_tokens equals input plus cache tokens of the same body', async () => {
    const body = {
      model,
      system: [{ type: 'text' as const, text: 'System prompt text', cache_control: { type: 'ephemeral' as const } }],
      tools: [weatherTool],
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Hi' }, { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'AAAA' } }] }],
    };
    const counted = await client.messages.countTokens(body);
    const created = await client.messages.create({ ...body, max_tokens: 10 });
    const usage = created.usage;
    assert.equal(counted.input_tokens, usage.input_tokens + (usage.cache_creation_input_tokens ?? 0) + (usage.cache_read_input_tokens ?? 0));
    assert.equal(counted.input_tokens, anthropicPromptTokens(body));
    assert.equal(counted.input_tokens, countTokens(JSON.stringify(weatherTool)) + countTokens('System prompt text') + countTokens('Hi') + 85);
  });

  it('rejects unknown fields, extra metadata keys, missing fields and missing models', async () => {
    await assert.rejects(client.messages.create({ model, max_tokens: 10, messages: [], frobnicate: true } as never), (error: unknown) => {
      assert.ok(error instanceof Anthropic.BadRequestError);
      assert.deepEqual((error.error as { error: unknown }).error, { type: 'invalid_request_error', message: 'frobnicate: Extra inputs are not permitted' });
      return true;
    });
    await assert.rejects(client.messages.create({ model, max_tokens: 10, metadata: { user_id: 'u', team: 't' } as never, messages: [{ role: 'user', content: 'x' }] }), Anthropic.BadRequestError);
    await assert.rejects(client.messages.create({ model, messages: [{ role: 'user', content: 'x' }] } as never), /max_tokens: Field required/);
    await assert.rejects(client.messages.countTokens({ model, max_tokens: 5, messages: [] } as never), /max_tokens: Extra inputs are not permitted/);
    await assert.rejects(client.messages.create({ model: 'missing-claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }), (error: unknown) => {
      assert.ok(error instanceof Anthropic.NotFoundError);
      const body = error.error as { type: string; error: unknown; request_id: string };
      assert.deepEqual(body.error, { type: 'not_found_error', message: 'model: missing-claude' });
      assert.match(body.request_id, /^req_/);
      return true;
    });
    const response = await fetch(`${simulator.url}/v1/messages`, { method: 'POST', body: '{}' });
    assert.equal(response.status, 401);
    assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'authentication_error');
    const bearer = await fetch(`${simulator.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { authorization: 'Bearer oauth-token' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'abcd' }] }),
    });
    assert.deepEqual(await bearer.json(), { input_tokens: 1 });
  });
});

describe('text blocks as the vendor sends them', () => {
  const post = (body: Record<string, unknown>): Promise<Response> => fetch(`${simulator.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello Claude' }], ...body }),
  });

  it('a text block carries no citations key, in the body and in the stream', async () => {
    const message = await (await post({})).json() as { content: Record<string, unknown>[] };
    assert.deepEqual(message.content, [{ type: 'text', text: replyText('Hello Claude', 16) }]);
    const stream = await (await post({ stream: true })).text();
    const starts = stream.split('\n').filter((line) => line.startsWith('data: ') && line.includes('"content_block_start"'));
    assert.deepEqual(starts.map((line) => JSON.parse(line.slice(6)) as unknown), [
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ]);
    assert.ok(!stream.includes('citations'));
  });

  it("@ai-sdk/anthropic's generateText and streamText read the reply", async () => {
    const provider = createAnthropic({ apiKey: 'sk-ant-test', baseURL: `${simulator.url}/v1` });
    const generated = await generateText({ model: provider(model), prompt: 'Hello Claude', maxOutputTokens: 100 });
    assert.equal(generated.text, replyText('Hello Claude', 16));
    assert.equal(generated.usage.outputTokens, 16);
    const streamed = streamText({ model: provider(model), prompt: 'Hello Claude', maxOutputTokens: 100 });
    assert.equal(await streamed.text, replyText('Hello Claude', 16));
  });
});
