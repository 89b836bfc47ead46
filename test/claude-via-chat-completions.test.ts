import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import {
  anthropicPromptTokens,
  countTokens,
  IMAGE_TOKENS,
  replyText,
  sampleFromSchema,
  toolResultReplyText,
  truncateToTokens,
} from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import {
  asArray,
  asRecord,
  balanceMicros,
  charges,
  errorA,
  expectedCost,
  ledger,
  openAiClient,
  postRaw,
  sseData,
  sseJsonFrames,
  waitFor,
  type JsonRecord,
} from './helpers/e2e.ts';

/**
 * Claude through the OpenAI-format endpoint: the gateway converts the chat request to a Messages request for the
 * (simulated) Anthropic API and the answer back. What the vendor received is read from the simulator's recorder.
 */

const SONNET = 'claude-sonnet-4-5';
const HAIKU = 'claude-haiku-4-5';
const UPSTREAM = { [SONNET]: 'claude-sonnet-4-5-20250929', [HAIKU]: 'claude-haiku-4-5-20251001' } as const;
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
};
const tools: ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: weatherParameters } },
];

interface PricedUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_cost: number;
  completion_cost: number;
  total_cost: number;
}

function pricedUsage(value: unknown): PricedUsage {
  const usage = asRecord(value, 'usage');
  for (const field of ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_cost', 'completion_cost', 'total_cost'] as const) {
    assert.equal(typeof usage[field], 'number', `usage.${field}: ${JSON.stringify(usage)}`);
  }
  return usage as unknown as PricedUsage;
}

/** The body the simulated Anthropic API received last. */
function lastVendorBody(gw: TestGateway): JsonRecord {
  return asRecord(gw.simulator.lastRequest('/v1/messages')?.json, 'the Messages request');
}

async function failure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await call;
  } catch (error) {
    assert.ok(error instanceof OpenAI.APIError, `expected an API error, got ${String(error)}`);
    return error;
  }
  return assert.fail('the call was expected to fail');
}

describe('Claude models through POST /v1/chat/completions', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '10.00' }));
    client = openAiClient(gw, key);
  });
  after(async () => {
    await gw?.close();
  });

  test('non-stream: converted request, OpenAI-shaped answer, charged exactly at the catalog prices', async () => {
    const before = await balanceMicros(gw, { userId });
    const { data, response } = await client.chat.completions
      .create({ model: SONNET, messages: [{ role: 'user', content: 'Hello Claude' }] })
      .withResponse();
    assert.equal(data.object, 'chat.completion');
    assert.match(data.id, /^msg_/);
    assert.equal(data.model, UPSTREAM[SONNET]);
    assert.equal(data.choices.length, 1);
    assert.equal(data.choices[0]?.message.role, 'assistant');
    assert.equal(data.choices[0]?.message.content, replyText('Hello Claude', 16));
    assert.equal(data.choices[0]?.finish_reason, 'stop');

    const sent = gw.simulator.lastRequest('/v1/messages');
    assert.equal(sent?.headers['x-api-key'], 'sim-anthropic');
    assert.equal(sent?.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(sent?.json, {
      model: UPSTREAM[SONNET],
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello Claude' }] }],
    });

    const usage = pricedUsage(data.usage);
    const tokens = { prompt_tokens: countTokens('Hello Claude'), completion_tokens: 16 };
    assert.equal(usage.prompt_tokens, tokens.prompt_tokens);
    assert.equal(usage.completion_tokens, tokens.completion_tokens);
    assert.equal(usage.total_tokens, tokens.prompt_tokens + tokens.completion_tokens);
    assert.deepEqual(asRecord(data.usage).prompt_tokens_details, { cached_tokens: 0 });
    const expected = expectedCost(SONNET, tokens);
    assert.equal(micros(usage.prompt_cost), expected.prompt);
    assert.equal(micros(usage.completion_cost), expected.completion);
    assert.equal(micros(usage.total_cost), expected.total);
    assert.equal(await balanceMicros(gw, { userId }), before - expected.total);
    const requestId = response.headers.get('x-request-id');
    const entries = charges(await ledger(gw, { userId })).filter((row) => row.requestId === requestId);
    assert.equal(entries.length, 1);
    assert.equal(micros(entries[0]!.amount), -expected.total);
    assert.equal(entries[0]!.model, SONNET);
  });

  test('stream: the same content as non-stream, role chunk first, one usage chunk with include_usage, charged exactly', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Stream a haiku about rain' }];
    const plain = await client.chat.completions.create({ model: HAIKU, messages });
    const before = await balanceMicros(gw, { userId });
    const stream = await client.chat.completions.create({ model: HAIKU, messages, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let first = true;
    let usage: PricedUsage | undefined;
    const finishes: string[] = [];
    for await (const chunk of stream) {
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, UPSTREAM[HAIKU]);
      if (first) assert.equal(chunk.choices[0]?.delta.role, 'assistant');
      first = false;
      text += chunk.choices[0]?.delta.content ?? '';
      const finish = chunk.choices[0]?.finish_reason;
      if (finish) finishes.push(finish);
      if (chunk.usage) {
        assert.equal(usage, undefined, 'one usage chunk');
        assert.deepEqual(chunk.choices, []);
        usage = pricedUsage(chunk.usage);
      }
    }
    assert.equal(text, plain.choices[0]?.message.content);
    assert.deepEqual(finishes, ['stop']);
    assert.ok(usage);
    const plainUsage = pricedUsage(plain.usage);
    assert.deepEqual(
      [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens, usage.total_cost],
      [plainUsage.prompt_tokens, plainUsage.completion_tokens, plainUsage.total_tokens, plainUsage.total_cost],
    );
    const expected = expectedCost(HAIKU, { prompt_tokens: countTokens('Stream a haiku about rain'), completion_tokens: 16 }).total;
    assert.equal(micros(usage.total_cost), expected);
    assert.equal(await balanceMicros(gw, { userId }), before - expected);
    assert.equal(lastVendorBody(gw).stream, true);
  });

  test('stream without include_usage: no usage frame reaches the client, the call is still charged from the vendor usage', async () => {
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: { model: HAIKU, messages: [{ role: 'user', content: 'Quiet stream' }], stream: true } });
    assert.equal(raw.status, 200);
    assert.equal(sseData(raw.text).at(-1), '[DONE]');
    const frames = sseJsonFrames(raw.text);
    for (const frame of frames) {
      assert.equal('usage' in frame, false);
      assert.equal(asArray(frame.choices).length, 1);
    }
    const text = frames.map((frame) => asRecord(asRecord(asArray(frame.choices)[0]).delta).content ?? '').join('');
    assert.equal(text, replyText('Quiet stream', 16));
    const expected = expectedCost(HAIKU, { prompt_tokens: countTokens('Quiet stream'), completion_tokens: 16 }).total;
    const requestId = raw.headers.get('x-request-id');
    const entry = await waitFor(async () => charges(await ledger(gw, { userId })).find((row) => row.requestId === requestId), 'the charge');
    assert.equal(micros(entry.amount), -expected);
  });

  test('tool call round trip: tool_calls out, tool_use / tool_result blocks to the vendor, text back', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const first = await client.chat.completions.create({ model: SONNET, messages, tools, tool_choice: 'required', parallel_tool_calls: false });
    assert.equal(first.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(first.choices[0]?.message.content, null);
    const call = first.choices[0]?.message.tool_calls?.[0];
    assert.ok(call && call.type === 'function');
    assert.match(call.id, /^toolu_/);
    assert.equal(call.function.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.function.arguments), sampleFromSchema(weatherParameters));
    const firstSent = lastVendorBody(gw);
    assert.deepEqual(firstSent.tools, [{ name: 'get_weather', description: 'Current weather for a city', input_schema: weatherParameters }]);
    assert.deepEqual(firstSent.tool_choice, { type: 'any', disable_parallel_tool_use: true });
    assert.equal(pricedUsage(first.usage).prompt_tokens, anthropicPromptTokens(firstSent));

    const result = '{"temperature":18,"sky":"clear"}';
    const second = await client.chat.completions.create({
      model: SONNET,
      tools,
      messages: [...messages, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'tool', tool_call_id: call.id, content: result }],
    });
    assert.equal(second.choices[0]?.finish_reason, 'stop');
    assert.equal(second.choices[0]?.message.content, toolResultReplyText(result));
    assert.deepEqual(lastVendorBody(gw).messages, [
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: sampleFromSchema(weatherParameters) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] },
    ]);
  });

  test('a streamed tool call: id and name first, then the arguments in pieces, finish tool_calls', async () => {
    const stream = await client.chat.completions.create({
      model: HAIKU,
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      stream: true,
    });
    const calls = new Map<number, { id?: string; name?: string; arguments: string }>();
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const piece of chunk.choices[0]?.delta.tool_calls ?? []) {
        const call = calls.get(piece.index) ?? { arguments: '' };
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name = piece.function.name;
        call.arguments += piece.function?.arguments ?? '';
        calls.set(piece.index, call);
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(finish, 'tool_calls');
    assert.equal(calls.size, 1);
    const call = calls.get(0);
    assert.match(call?.id ?? '', /^toolu_/);
    assert.equal(call?.name, 'get_weather');
    assert.deepEqual(JSON.parse(call?.arguments ?? ''), sampleFromSchema(weatherParameters));
    assert.deepEqual(lastVendorBody(gw).tool_choice, { type: 'tool', name: 'get_weather' });
  });

  test('an image part: a data URL goes as a base64 image block, priced at the vendor count', async () => {
    const before = await balanceMicros(gw, { userId });
    const completion = await client.chat.completions.create({
      model: SONNET,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          ],
        },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, replyText('What is in this picture?', 16));
    assert.deepEqual(lastVendorBody(gw).messages, [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this picture?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        ],
      },
    ]);
    const usage = pricedUsage(completion.usage);
    assert.equal(usage.prompt_tokens, countTokens('What is in this picture?') + IMAGE_TOKENS);
    const expected = expectedCost(SONNET, { prompt_tokens: usage.prompt_tokens, completion_tokens: 16 }).total;
    assert.equal(await balanceMicros(gw, { userId }), before - expected);
  });

  test('system and developer messages become the system prompt; no system role reaches the vendor', async () => {
    const completion = await client.chat.completions.create({
      model: HAIKU,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Answer in English.' },
        { role: 'user', content: 'Hi there' },
      ],
    });
    const sent = lastVendorBody(gw);
    assert.deepEqual(sent.system, [
      { type: 'text', text: 'You are terse.' },
      { type: 'text', text: 'Answer in English.' },
    ]);
    const roles = asArray(sent.messages).map((message) => asRecord(message).role);
    assert.deepEqual(roles, ['user']);
    assert.equal(completion.usage?.prompt_tokens, countTokens('You are terse.') + countTokens('Answer in English.') + countTokens('Hi there'));
  });

  test('stop sequences, max_completion_tokens and finish reasons', async () => {
    const full = replyText('Count with me', 16);
    const stopped = await client.chat.completions.create({ model: HAIKU, messages: [{ role: 'user', content: 'Count with me' }], stop: ['charlie'] });
    assert.deepEqual(lastVendorBody(gw).stop_sequences, ['charlie']);
    assert.equal(stopped.choices[0]?.message.content, full.slice(0, full.indexOf('charlie')));
    assert.equal(stopped.choices[0]?.finish_reason, 'stop');

    const short = await client.chat.completions.create({ model: HAIKU, messages: [{ role: 'user', content: 'Count with me' }], max_completion_tokens: 5, max_tokens: 9 });
    assert.equal(lastVendorBody(gw).max_tokens, 5);
    assert.equal(short.choices[0]?.message.content, truncateToTokens(full, 5));
    assert.equal(short.choices[0]?.finish_reason, 'length');
    assert.equal(short.usage?.completion_tokens, 5);

    const legacy = await client.chat.completions.create({ model: HAIKU, messages: [{ role: 'user', content: 'Count with me' }], max_tokens: 7, stream: true });
    let finish: string | null = null;
    for await (const chunk of legacy) finish = chunk.choices[0]?.finish_reason ?? finish;
    assert.equal(lastVendorBody(gw).max_tokens, 7);
    assert.equal(finish, 'length');
  });

  test('json_schema response format becomes output_config.format', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' }, score: { type: 'integer' } }, required: ['answer', 'score'], additionalProperties: false };
    const completion = await client.chat.completions.create({
      model: SONNET,
      messages: [{ role: 'user', content: 'Rate this' }],
      response_format: { type: 'json_schema', json_schema: { name: 'rating', schema, strict: true } },
    });
    assert.deepEqual(lastVendorBody(gw).output_config, { format: { type: 'json_schema', schema } });
    assert.deepEqual(JSON.parse(completion.choices[0]?.message.content ?? ''), sampleFromSchema(schema));
  });

  test('content Anthropic cannot take is a 400 in shape A; nothing reaches the vendor', async () => {
    const sentBefore = gw.simulator.requests.length;
    const raw = await postRaw(gw, '/v1/chat/completions', {
      key,
      body: { model: SONNET, messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }] },
    });
    assert.equal(raw.status, 400);
    assert.match(errorA(raw.json).message, /messages\[0\]\.content\[0\]: content parts of type 'input_audio' are not supported/);
    assert.equal(gw.simulator.requests.length, sentBefore);
  });
});

describe('Anthropic vendor errors through POST /v1/chat/completions', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '5.00' }));
    client = openAiClient(gw, key);
  });
  after(async () => {
    await gw?.close();
  });

  const chat = { model: SONNET, messages: [{ role: 'user' as const, content: 'Hello' }] };

  test('overloaded (529) is a 502, stream or not, and costs nothing', async () => {
    const before = await balanceMicros(gw, { userId });
    for (const stream of [false, true]) {
      gw.simulator.addFault({ match: { path: '/v1/messages' }, status: 529 });
      const error = await failure(stream ? client.chat.completions.create({ ...chat, stream: true }) : client.chat.completions.create(chat));
      assert.ok(error instanceof OpenAI.InternalServerError);
      assert.equal(error.status, 502);
      assert.match(error.message, /Overloaded/);
    }
    assert.equal(await balanceMicros(gw, { userId }), before);
  });

  test('a vendor 400 stays 400 with the vendor message, in the OpenAI error shape', async () => {
    gw.simulator.addFault({ match: { path: '/v1/messages' }, status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' }, request_id: 'req_x' } });
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: chat });
    assert.equal(raw.status, 400);
    assert.deepEqual(raw.json, { error: { message: 'messages: roles must alternate', type: 'invalid_request_error', param: null, code: null } });

    // A real refusal of the simulated vendor: tool_choice naming a tool that was not given.
    const error = await failure(
      client.chat.completions.create({ ...chat, tools, tool_choice: { type: 'function', function: { name: 'get_time' } } }),
    );
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.match(error.message, /tool_choice: Tool 'get_time' not found in the list of tools/);
  });

  test('rate limit (429) stays 429 with the vendor message', async () => {
    gw.simulator.addFault({ match: { path: '/v1/messages' }, status: 429 });
    const error = await failure(client.chat.completions.create(chat));
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.match(error.message, /rate limit/);
  });

  test('an error event after the stream began reaches the client as an error frame', async () => {
    gw.simulator.addFault({ match: { path: '/v1/messages' }, errorEventAfterChunks: 2 });
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: { ...chat, stream: true } });
    assert.equal(raw.status, 200);
    const payloads = sseData(raw.text);
    assert.notEqual(payloads.at(-1), '[DONE]', 'no [DONE] after an error');
    assert.deepEqual(JSON.parse(payloads.at(-1) ?? ''), { error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: null } });

    gw.simulator.addFault({ match: { path: '/v1/messages' }, errorEventAfterChunks: 2 });
    const stream = await client.chat.completions.create({ ...chat, stream: true });
    const error = await failure((async () => {
      for await (const chunk of stream) void chunk;
    })());
    assert.match(error.message, /Overloaded/);
  });

  test('embeddings are not served by a Claude model', async () => {
    const raw = await postRaw(gw, '/v1/embeddings', { key, body: { model: SONNET, input: 'hi' } });
    assert.ok(raw.status >= 400 && raw.status < 500, raw.text);
    assert.equal(gw.simulator.requests.filter((request) => request.path === '/v1/embeddings').length, 0);
  });
});
