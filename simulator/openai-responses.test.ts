import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import { countTokens, IMAGE_TOKENS, replyText, sampleFromSchema, startSimulator, toolResultReplyText, type Simulator } from './server.ts';

let simulator: Simulator;
let client: OpenAI;

before(async () => {
  simulator = await startSimulator();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${simulator.url}/v1`, maxRetries: 0 });
});
after(() => simulator.close());
beforeEach(() => simulator.reset());

const FIXTURES = new URL('./__fixtures__/openai-responses/', import.meta.url);
const fixture = (name: string): string => readFileSync(new URL(name, FIXTURES), 'utf8');
const fixtureJson = (name: string): unknown => JSON.parse(fixture(name));

/** Keys the simulator may send beyond a documentation example (see __fixtures__/openai-responses/README.md). */
const EXTRA_KEYS = new Set(['sequence_number', 'logprobs', 'completed_at', 'input_tokens_details']);

type Shape = string | Shape[] | { [key: string]: Shape };

/** Keys and JSON types, recursively (an array is described by its first element). */
function shape(value: unknown): Shape {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, shape(item)]));
  return typeof value;
}

/** The simulator's shape with the allowed extra keys dropped where the fixture lacks them. */
function comparable(actual: Shape, expected: Shape): Shape {
  if (Array.isArray(actual) && Array.isArray(expected)) {
    const [first] = actual;
    const [model] = expected;
    return first === undefined || model === undefined ? actual : [comparable(first, model)];
  }
  if (typeof actual === 'object' && typeof expected === 'object' && !Array.isArray(actual) && !Array.isArray(expected)) {
    const result: Record<string, Shape> = {};
    for (const [key, value] of Object.entries(actual)) {
      if (!(key in expected) && EXTRA_KEYS.has(key)) continue;
      const model = expected[key];
      result[key] = model === undefined ? value : comparable(value, model);
    }
    return result;
  }
  return actual;
}

function assertSameShape(actual: unknown, expected: unknown, where: string): void {
  const expectedShape = shape(expected);
  assert.deepEqual(comparable(shape(actual), expectedShape), expectedShape, where);
}

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event !== undefined && data !== undefined) events.push({ event, data: JSON.parse(data) as Record<string, unknown> });
  }
  return events;
}

async function post(body: unknown): Promise<Response> {
  return fetch(`${simulator.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: 'Bearer sk-test', 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city', 'days'], additionalProperties: false },
  strict: true,
};

describe('responses: the documentation examples', () => {
  it('a text response has exactly the documented shape', async () => {
    const response = await post({ model: 'gpt-5.4', input: 'Tell me a three sentence bedtime story about a unicorn.' });
    assert.equal(response.status, 200);
    assertSameShape(await response.json(), fixtureJson('create-text.json'), 'create-text.json');
  });

  it('a function call has exactly the documented shape', async () => {
    const response = await post(fixtureJson('create-function-call.request.json'));
    assert.equal(response.status, 200);
    const body = await response.json() as Record<string, unknown>;
    assertSameShape(body, fixtureJson('create-function-call.json'), 'create-function-call.json');
    assert.deepEqual((body.output as Record<string, unknown>[])[0]?.arguments, JSON.stringify({ location: 'sample', unit: 'celsius' }));
  });

  it('a stream has the documented events, in order, with consecutive sequence numbers', async () => {
    const response = await post({ model: 'gpt-5.4', instructions: 'You are a helpful assistant.', input: 'Hello!', stream: true });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
    const text = await response.text();
    assert.ok(!text.includes('[DONE]'));
    const actual = parseSse(text);
    const documented = parseSse(fixture('stream-text.sse'));
    assert.ok(fixture('stream-text.sse').includes('\n...\n'), 'the documented stream elides repeated deltas with "..."');
    // The documentation shows one delta and then "..."; the simulator sends streamChunks (8) deltas.
    const deltas = actual.filter((event) => event.event === 'response.output_text.delta');
    assert.equal(deltas.length, 8);
    const collapsed = actual.filter((event, index) => event.event !== 'response.output_text.delta' || actual[index - 1]?.event !== 'response.output_text.delta');
    assert.deepEqual(collapsed.map((event) => event.event), documented.map((event) => event.event));
    for (const [index, event] of collapsed.entries()) {
      const model = documented[index] as SseEvent;
      assert.equal(event.data.type, event.event);
      assertSameShape(event.data, model.data, `event ${index} ${event.event}`);
    }
    assert.deepEqual(actual.map((event) => event.data.sequence_number), actual.map((_, index) => index));
    assert.equal(deltas.map((event) => event.data.delta).join(''), replyText('Hello!', 16));
  });

  it('a function-call stream matches the documented events', async () => {
    const response = await post({ model: 'gpt-5.4', input: 'Weather?', tools: [weatherTool], stream: true });
    const events = parseSse(await response.text());
    const documented = fixtureJson('stream-events.json') as Record<string, Record<string, unknown>>;
    const names = events.map((event) => event.event);
    assert.deepEqual(names, [
      'response.created', 'response.in_progress', 'response.output_item.added',
      ...Array.from({ length: 8 }, () => 'response.function_call_arguments.delta'),
      'response.function_call_arguments.done', 'response.output_item.done', 'response.completed',
    ]);
    const nonStream = await (await post({ model: 'gpt-5.4', input: 'Weather?', tools: [weatherTool] })).json() as { output: Record<string, unknown>[] };
    const item = nonStream.output[0] as Record<string, unknown>;
    for (const event of events) {
      const model = documented[event.event];
      if (model !== undefined && !event.event.startsWith('response.output_item')) assertSameShape(event.data, model, event.event);
    }
    const added = events[2]?.data.item as Record<string, unknown>;
    assert.deepEqual(shape(added), shape(item));
    assert.deepEqual({ ...added, arguments: item.arguments, status: 'completed', id: item.id, call_id: item.call_id }, item);
    const args = events.filter((event) => event.event === 'response.function_call_arguments.delta').map((event) => event.data.delta).join('');
    assert.equal(args, JSON.stringify(sampleFromSchema(weatherTool.parameters)));
    assert.equal(events.at(-3)?.data.arguments, args);
    assert.deepEqual(shape(events.at(-2)?.data.item), shape(item));
  });
});

describe('responses: with the openai client', () => {
  it('answers a string input with exact usage and output_text', async () => {
    const response = await client.responses.create({ model: 'gpt-5.4', instructions: 'Be brief.', input: 'What is the capital of France?', metadata: { team: 'a' } });
    const expected = replyText('What is the capital of France?', 16);
    assert.equal(response.output_text, expected);
    assert.equal(response.status, 'completed');
    assert.equal(response.object, 'response');
    assert.match(response.id, /^resp_/);
    assert.deepEqual(response.metadata, { team: 'a' });
    assert.equal(response.instructions, 'Be brief.');
    const input = countTokens('Be brief.') + countTokens('What is the capital of France?');
    assert.deepEqual(response.usage, {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 16,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + 16,
    });
  });

  it('reads message items with input_text and input_image parts', async () => {
    const response = await client.responses.create({
      model: 'gpt-5.4-mini',
      input: [
        { role: 'developer', content: 'Describe images.' },
        { role: 'user', content: [{ type: 'input_text', text: 'What is in this picture?' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }] },
      ],
    });
    assert.equal(response.output_text, replyText('What is in this picture?', 16));
    assert.equal(response.usage?.input_tokens, countTokens('Describe images.') + countTokens('What is in this picture?') + IMAGE_TOKENS);
  });

  it('streams the same response the create call returns', async () => {
    const body = { model: 'gpt-5.4', input: 'Tell me a story about a cat' };
    const plain = await client.responses.create(body);
    const stream = await client.responses.create({ ...body, stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, plain.output_text);
    assert.deepEqual(completed?.usage, plain.usage);
    assert.equal(completed?.status, 'completed');
    const retrieved = await client.responses.retrieve(completed?.id ?? '');
    assert.deepEqual(retrieved.output, completed?.output);
  });

  it('calls a function tool, takes its output on previous_response_id and keeps the conversation', async () => {
    const first = await client.responses.create({ model: 'gpt-5.4', input: 'What is the weather in Paris?', tools: [weatherTool] });
    const call = first.output[0];
    assert.equal(call?.type, 'function_call');
    if (call?.type !== 'function_call') return;
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), { city: 'sample', days: 1 });
    assert.equal(first.usage?.output_tokens, countTokens(call.arguments));
    const second = await client.responses.create({
      model: 'gpt-5.4',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 24 C' }],
      tools: [weatherTool],
    });
    assert.equal(second.output_text, toolResultReplyText('Sunny, 24 C'));
    assert.equal(second.previous_response_id, first.id);
    // The follow-up's prompt is the whole conversation: the first turn, the call and its output.
    const tools = countTokens(JSON.stringify([weatherTool]));
    const callJson = JSON.stringify([{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }]);
    assert.equal(second.usage?.input_tokens, tools + countTokens('What is the weather in Paris?') + countTokens(callJson) + countTokens('Sunny, 24 C'));
    const retrieved = await client.responses.retrieve(first.id);
    assert.deepEqual(retrieved.output, first.output);
  });

  it('streams a function call the client assembles', async () => {
    const stream = client.responses.stream({ model: 'gpt-5.4', input: 'Weather?', tools: [weatherTool], tool_choice: { type: 'function', name: 'get_weather' } });
    const final = await stream.finalResponse();
    const call = final.output[0];
    assert.equal(call?.type, 'function_call');
    assert.equal(call?.type === 'function_call' ? call.arguments : '', JSON.stringify({ city: 'sample', days: 1 }));
  });

  it('tool_choice none answers with text; an unknown named tool is a 400', async () => {
    const text = await client.responses.create({ model: 'gpt-5.4', input: 'Hi', tools: [weatherTool], tool_choice: 'none' });
    assert.equal(text.output_text, replyText('Hi', 16));
    await assert.rejects(
      client.responses.create({ model: 'gpt-5.4', input: 'Hi', tools: [weatherTool], tool_choice: { type: 'function', name: 'nope' } }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'tool_choice',
    );
  });

  it('text.format json_schema answers a sample of the schema', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
    const response = await client.responses.create({ model: 'gpt-5.4', input: 'Who?', text: { format: { type: 'json_schema', name: 'person', schema, strict: true } } });
    assert.deepEqual(JSON.parse(response.output_text), { name: 'sample', age: 1 });
    assert.equal(response.text?.format?.type, 'json_schema');
  });

  it('max_output_tokens cuts the reply: status incomplete, in the stream too', async () => {
    const body = { model: 'gpt-5.4', input: 'Tell me a long story', max_output_tokens: 16 };
    simulator.options.replyTokens = 40;
    try {
      const response = await client.responses.create(body);
      assert.equal(response.status, 'incomplete');
      assert.deepEqual(response.incomplete_details, { reason: 'max_output_tokens' });
      assert.equal(response.usage?.output_tokens, 16);
      assert.equal(countTokens(response.output_text), 16);
      const events = parseSse(await (await post({ ...body, stream: true })).text());
      assert.equal(events.at(-1)?.event, 'response.incomplete');
      assert.equal((events.at(-1)?.data.response as Record<string, unknown>).status, 'incomplete');
    } finally {
      simulator.options.replyTokens = 16;
    }
  });

  it('repeats of a long conversation on previous_response_id report cached tokens', async () => {
    const long = 'word '.repeat(1200);
    const first = await client.responses.create({ model: 'gpt-5.4', input: long });
    assert.equal(first.usage?.input_tokens_details.cached_tokens, 0);
    const second = await client.responses.create({ model: 'gpt-5.4', previous_response_id: first.id, input: 'And then?' });
    // The vendor caches the stored conversation including its output: the whole earlier turn is the cached prefix.
    const prefix = countTokens(long) + countTokens(first.output_text);
    assert.equal(second.usage?.input_tokens_details.cached_tokens, Math.floor(prefix / 128) * 128);
    assert.equal(second.usage?.input_tokens, prefix + countTokens('And then?'));
  });

  it('store false keeps nothing; unknown ids answer the vendor errors', async () => {
    const unstored = await client.responses.create({ model: 'gpt-5.4', input: 'Hi', store: false });
    assert.equal((unstored as unknown as { store: boolean }).store, false);
    await assert.rejects(client.responses.retrieve(unstored.id), (error: unknown) => error instanceof OpenAI.NotFoundError
      && error.message.includes(`Response with id '${unstored.id}' not found.`));
    await assert.rejects(client.responses.create({ model: 'gpt-5.4', input: 'Hi', previous_response_id: 'resp_unknown' }), (error: unknown) =>
      error instanceof OpenAI.BadRequestError && error.param === 'previous_response_id' && error.code === 'previous_response_not_found');
    const stored = await client.responses.create({ model: 'gpt-5.4', input: 'Hi' });
    const deleted = await fetch(`${simulator.url}/v1/responses/${stored.id}`, { method: 'DELETE', headers: { authorization: 'Bearer sk-test' } });
    assert.deepEqual(await deleted.json(), { id: stored.id, object: 'response', deleted: true });
    await assert.rejects(client.responses.retrieve(stored.id), OpenAI.NotFoundError);
  });

  it('bad input and unknown models answer the vendor error shape', async () => {
    const cases: [unknown, string | null, string | null][] = [
      [{ input: 'Hi' }, 'model', 'missing_required_parameter'],
      [{ model: 'gpt-5.4' }, 'input', 'missing_required_parameter'],
      [{ model: 'gpt-5.4', input: 3 }, 'input', 'invalid_type'],
      [{ model: 'gpt-5.4', input: 'Hi', max_output_tokens: 5 }, 'max_output_tokens', 'integer_below_min_value'],
      [{ model: 'gpt-5.4', input: [{ role: 'robot', content: 'Hi' }] }, 'input[0].role', 'invalid_value'],
      [{ model: 'gpt-5.4', input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id', 'missing_required_parameter'],
      [{ model: 'missing-model', input: 'Hi' }, 'model', 'model_not_found'],
      [{ model: 'claude-opus-4-8', input: 'Hi' }, 'model', 'model_not_found'],
    ];
    for (const [body, param, code] of cases) {
      const response = await post(body);
      assert.equal(response.status, 400, JSON.stringify(body));
      const error = (await response.json() as { error: Record<string, unknown> }).error;
      assert.deepEqual(Object.keys(error).sort(), ['code', 'message', 'param', 'type']);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param, JSON.stringify(body));
      assert.equal(error.code, code, JSON.stringify(body));
    }
  });
});

describe('responses: faults', () => {
  it('an injected status answers the vendor error body', async () => {
    simulator.addFault({ match: { path: '/v1/responses' }, status: 429, headers: { 'retry-after': '2' } });
    await assert.rejects(client.responses.create({ model: 'gpt-5.4', input: 'Hi' }), (error: unknown) =>
      error instanceof OpenAI.RateLimitError && error.headers.get('retry-after') === '2');
  });

  it('a cut stream ends after N deltas with no response.completed', async () => {
    simulator.addFault({ match: { path: '/v1/responses' }, cutAfterChunks: 3 });
    const response = await post({ model: 'gpt-5.4', input: 'Hi', stream: true });
    assert.equal(response.status, 200);
    const text = await response.text().catch(() => '');
    assert.ok(!text.includes('response.completed'));
  });

  it('an in-stream error is the vendor error event with the next sequence number', async () => {
    simulator.addFault({ match: { path: '/v1/responses' }, errorEventAfterChunks: 2 });
    const events = parseSse(await (await post({ model: 'gpt-5.4', input: 'Hi', stream: true })).text());
    const last = events.at(-1);
    assert.equal(last?.event, 'error');
    assertSameShape(last?.data, (fixtureJson('stream-events.json') as Record<string, unknown>).error, 'error event');
    assert.equal(last?.data.code, 'server_error');
    assert.deepEqual(events.map((event) => event.data.sequence_number), events.map((_, index) => index));
    assert.equal(events.filter((event) => event.event === 'response.output_text.delta').length, 2);
    simulator.addFault({ match: { path: '/v1/responses' }, errorEventAfterChunks: 2 });
    const stream = await client.responses.create({ model: 'gpt-5.4', input: 'Hi', stream: true });
    await assert.rejects(async () => {
      for await (const event of stream) if (event.type === 'error') throw new Error(event.message);
    }, /server had an error/);
  });
});
