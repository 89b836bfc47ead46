import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { Response as OpenAiResponse, ResponseInputItem, ResponseStreamEvent, Tool } from 'openai/resources/responses/responses';
import { anthropicPromptTokens, replyText, sampleFromSchema, thinkingText, toolResultReplyText } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, charges, errorA, expectedCost, ledger, openAiClient, postRaw, waitFor, type JsonRecord } from './helpers/e2e.ts';

/**
 * POST /v1/responses and GET /v1/responses/:id with the openai SDK. Claude models are translated to the Messages API of
 * the (simulated) vendor and back; what the vendor received is read from the simulator's recorder.
 */

const SONNET = 'claude-sonnet-4-5';
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const tools: Tool[] = [{ type: 'function', name: 'get_weather', description: 'Current weather for a city', parameters: weatherParameters, strict: true }];

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

interface RequestRow {
  id: string;
  endpoint: string;
  model: string | null;
  stream: boolean;
  status: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cost: string;
}

/** The request-log row of one request (after the writer has flushed). */
async function requestRow(gw: TestGateway, userId: string, requestId: string | null): Promise<RequestRow> {
  await gw.app.services.requestLog.idle();
  const rows = (await gw.admin<{ data: RequestRow[] }>('GET', `/requests?userId=${userId}&limit=100`)).body.data;
  const row = rows.find((candidate) => candidate.id === requestId);
  assert.ok(row, `no request-log row for ${requestId}`);
  return row;
}

/** The one ledger charge of a request, in micro-units (negative). */
async function chargeOf(gw: TestGateway, userId: string, requestId: string | null): Promise<bigint> {
  const entries = await waitFor(async () => {
    const found = charges(await ledger(gw, { userId })).filter((row) => row.requestId === requestId);
    return found.length > 0 ? found : undefined;
  }, 'the charge');
  assert.equal(entries.length, 1, 'one ledger entry per request');
  return micros(entries[0]!.amount);
}

/** What the Response's usage costs at a model's catalog prices (Claude: no cache use here, so every input token is plain). */
function usageCost(model: string, response: Pick<OpenAiResponse, 'usage'>): bigint {
  assert.ok(response.usage);
  return expectedCost(model, { prompt_tokens: response.usage.input_tokens, completion_tokens: response.usage.output_tokens }).total;
}

describe('POST /v1/responses with a Claude model', () => {
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

  test('non-stream: instructions and input translated, a Response object back, charged once = x-tollgate-cost = request log', async () => {
    const { data, response } = await client.responses.create({ model: SONNET, instructions: 'Answer briefly.', input: 'Hello Claude', max_output_tokens: 300 }).withResponse();
    assert.match(data.id, /^resp_/);
    assert.equal(data.object, 'response');
    assert.equal(data.status, 'completed');
    assert.equal(data.model, SONNET);
    assert.equal(data.instructions, 'Answer briefly.');
    assert.equal(data.output.length, 1);
    const message = data.output[0];
    assert.ok(message?.type === 'message');
    assert.match(message.id, /^msg_/);
    assert.equal(message.status, 'completed');
    assert.deepEqual(message.content, [{ type: 'output_text', annotations: [], logprobs: [], text: replyText('Hello Claude', 16) }]);
    assert.equal(data.output_text, replyText('Hello Claude', 16));

    const sent = lastVendorBody(gw);
    assert.deepEqual(sent.system, [{ type: 'text', text: 'Answer briefly.' }]);
    assert.deepEqual(sent.messages, [{ role: 'user', content: [{ type: 'text', text: 'Hello Claude' }] }]);
    assert.equal(sent.max_tokens, 300);

    assert.ok(data.usage);
    assert.equal(data.usage.input_tokens, anthropicPromptTokens(sent));
    assert.equal(data.usage.output_tokens, 16);
    assert.equal(data.usage.total_tokens, data.usage.input_tokens + 16);
    assert.deepEqual(data.usage.input_tokens_details, { cached_tokens: 0 });
    assert.deepEqual(data.usage.output_tokens_details, { reasoning_tokens: 0 });

    const requestId = response.headers.get('x-request-id');
    const charged = await chargeOf(gw, userId, requestId);
    assert.equal(charged, -usageCost(SONNET, data));
    assert.equal(micros(response.headers.get('x-tollgate-cost') ?? 'missing'), -charged);
    const row = await requestRow(gw, userId, requestId);
    assert.equal(row.endpoint, 'responses');
    assert.equal(row.model, SONNET);
    assert.equal(row.status, 200);
    assert.equal(row.input_tokens, data.usage.input_tokens);
    assert.equal(row.output_tokens, 16);
    assert.equal(micros(row.cost), -charged);
  });

  test('stream: the events of the Responses API in order, the same text as non-stream, usage in response.completed, charged once', async () => {
    const plain = await client.responses.create({ model: SONNET, input: 'Stream a haiku about rain' });
    const { data: stream, response } = await client.responses.create({ model: SONNET, input: 'Stream a haiku about rain', stream: true }).withResponse();
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = [...new Set(events.map((event) => event.type))];
    assert.deepEqual(types, [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
    const text = events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
    assert.equal(text, plain.output_text);
    const completed = events.at(-1);
    assert.ok(completed?.type === 'response.completed');
    assert.equal(completed.response.status, 'completed');
    assert.equal(completed.response.output_text ?? completed.response.output.map((item) => (item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')).join('') : '')).join(''), plain.output_text);
    assert.deepEqual(completed.response.usage, plain.usage);
    assert.equal(lastVendorBody(gw).stream, true);
    const requestId = response.headers.get('x-request-id');
    assert.equal(await chargeOf(gw, userId, requestId), -usageCost(SONNET, completed.response));
    const row = await requestRow(gw, userId, requestId);
    assert.equal(row.stream, true);
    assert.equal(row.endpoint, 'responses');
  });

  test('function call, then function_call_output: tool_use and tool_result blocks to the vendor, text back', async () => {
    const first = await client.responses.create({ model: SONNET, input: 'What is the weather in Paris?', tools, tool_choice: 'required' });
    assert.equal(first.status, 'completed');
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call');
    assert.match(call.id ?? '', /^fc_/);
    assert.match(call.call_id, /^toolu_/);
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(JSON.parse(call.arguments), sampleFromSchema(weatherParameters));
    const sentTools = asArray(lastVendorBody(gw).tools);
    assert.deepEqual(sentTools, [{ name: 'get_weather', description: 'Current weather for a city', input_schema: weatherParameters, strict: true }]);
    assert.deepEqual(lastVendorBody(gw).tool_choice, { type: 'any' });

    const input: ResponseInputItem[] = [
      { role: 'user', content: 'What is the weather in Paris?' },
      ...(first.output as ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 21}' },
    ];
    const second = await client.responses.create({ model: SONNET, input, tools });
    assert.equal(second.output_text, toolResultReplyText('{"temperature": 21}'));
    const messages = asArray(lastVendorBody(gw).messages).map((message) => asRecord(message));
    assert.deepEqual(messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: call.call_id, name: 'get_weather', input: sampleFromSchema(weatherParameters) }] });
    assert.deepEqual(messages[2], { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: '{"temperature": 21}' }] });
  });

  test('stream with a function call: output_item.added, arguments deltas and done, then response.completed', async () => {
    const stream = await client.responses.create({ model: SONNET, input: 'Weather in Oslo?', tools, tool_choice: 'required', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((event) => event.type === 'response.output_item.added');
    assert.ok(added?.type === 'response.output_item.added' && added.item.type === 'function_call');
    const args = events.map((event) => (event.type === 'response.function_call_arguments.delta' ? event.delta : '')).join('');
    const done = events.find((event) => event.type === 'response.function_call_arguments.done');
    assert.ok(done?.type === 'response.function_call_arguments.done');
    assert.equal(done.arguments, args);
    assert.deepEqual(JSON.parse(args), sampleFromSchema(weatherParameters));
    const completed = events.at(-1);
    assert.ok(completed?.type === 'response.completed');
    const item = completed.response.output[0];
    assert.ok(item?.type === 'function_call');
    assert.equal(item.arguments, args);
    assert.equal(item.call_id, added.item.call_id);
  });

  test("Codex's default tools: a namespace is flattened, web_search skipped (header), the call comes back with its namespace", async () => {
    const spawnParameters = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'], additionalProperties: false };
    const codexTools = [
      { type: 'namespace', name: 'multi_agent_v1', description: 'Tools for sub-agents.', tools: [{ type: 'function', name: 'spawn_agent', description: 'Spawn an agent.', strict: false, parameters: spawnParameters }] },
      { type: 'web_search', external_web_access: false },
      ...tools,
    ] as unknown as Tool[];
    const { data: first, response } = await client.responses.create({ model: SONNET, input: 'Delegate this.', tools: codexTools, tool_choice: 'required' }).withResponse();
    assert.equal(response.headers.get('x-tollgate-skipped-tools'), 'web_search');
    const sent = lastVendorBody(gw);
    assert.deepEqual(
      asArray(sent.tools).map((tool) => asRecord(tool).name),
      ['multi_agent_v1__spawn_agent', 'get_weather'],
      'the namespace flattened, web search left out',
    );
    assert.equal(asRecord(asArray(sent.tools)[0]).description, 'Spawn an agent.\n\n(Part of multi_agent_v1: Tools for sub-agents.)');
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call');
    assert.equal(call.name, 'spawn_agent');
    assert.equal(call.namespace, 'multi_agent_v1');
    assert.deepEqual(JSON.parse(call.arguments), sampleFromSchema(spawnParameters));

    // Codex sends the whole conversation back (store: false): the namespaced call goes to Claude under its flat name.
    const input: ResponseInputItem[] = [
      { role: 'user', content: 'Delegate this.' },
      ...(first.output as ResponseInputItem[]),
      { type: 'function_call_output', call_id: call.call_id, output: 'agent started' },
    ];
    const second = await client.responses.create({ model: SONNET, input, tools: codexTools, store: false });
    assert.equal(second.output_text, toolResultReplyText('agent started'));
    const messages = asArray(lastVendorBody(gw).messages).map((message) => asRecord(message));
    assert.deepEqual(messages[1], { role: 'assistant', content: [{ type: 'tool_use', id: call.call_id, name: 'multi_agent_v1__spawn_agent', input: sampleFromSchema(spawnParameters) }] });

    // Streamed: the function_call item carries its namespace from output_item.added on.
    const stream = await client.responses.create({ model: SONNET, input: 'Delegate again.', tools: codexTools, tool_choice: 'required', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((event) => event.type === 'response.output_item.added');
    assert.ok(added?.type === 'response.output_item.added' && added.item.type === 'function_call');
    assert.deepEqual([added.item.name, added.item.namespace], ['spawn_agent', 'multi_agent_v1']);
    const done = events.find((event) => event.type === 'response.function_call_arguments.done');
    assert.ok(done?.type === 'response.function_call_arguments.done');
    assert.equal(done.name, 'spawn_agent');
  });

  test('a custom (freeform) tool: a function with one string input to Claude, a custom_tool_call back, its output continues', async () => {
    const grammar = 'start: "*** Begin Patch" /(.|\\n)*/ "*** End Patch"';
    const customTools = [{ type: 'custom', name: 'apply_patch', description: 'Apply a patch.', format: { type: 'grammar', syntax: 'lark', definition: grammar } }] as Tool[];
    const first = await client.responses.create({ model: SONNET, input: 'Fix the bug.', tools: customTools, tool_choice: { type: 'custom', name: 'apply_patch' } });
    const [sentTool] = asArray(lastVendorBody(gw).tools).map((tool) => asRecord(tool));
    const inputSchema = { type: 'object', properties: { input: { type: 'string', description: 'The raw text input of the tool.' } }, required: ['input'], additionalProperties: false };
    assert.deepEqual(sentTool, { name: 'apply_patch', description: `Apply a patch.\n\nThe input must follow this lark grammar:\n${grammar}`, input_schema: inputSchema });
    const call = first.output.find((item) => item.type === 'custom_tool_call');
    assert.ok(call?.type === 'custom_tool_call', JSON.stringify(first.output));
    assert.match(call.id ?? '', /^ctc_/);
    assert.equal(call.name, 'apply_patch');
    const sampled = (sampleFromSchema(inputSchema) as { input: string }).input;
    assert.equal(call.input, sampled);

    const second = await client.responses.create({ model: SONNET, previous_response_id: first.id, input: [{ type: 'custom_tool_call_output', call_id: call.call_id, output: 'patched' }], tools: customTools });
    assert.equal(second.output_text, toolResultReplyText('patched'));
    const messages = asArray(lastVendorBody(gw).messages).map((message) => asRecord(message));
    assert.deepEqual(messages.slice(1), [
      { role: 'assistant', content: [{ type: 'tool_use', id: call.call_id, name: 'apply_patch', input: { input: sampled } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.call_id, content: 'patched' }] },
    ]);

    const stream = await client.responses.create({ model: SONNET, input: 'Fix it again.', tools: customTools, tool_choice: 'required', stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const added = events.find((event) => event.type === 'response.output_item.added');
    assert.ok(added?.type === 'response.output_item.added' && added.item.type === 'custom_tool_call');
    const inputDone = events.find((event) => event.type === 'response.custom_tool_call_input.done');
    assert.ok(inputDone?.type === 'response.custom_tool_call_input.done');
    assert.equal(inputDone.input, sampled);
    const completed = events.at(-1);
    assert.ok(completed?.type === 'response.completed');
    const item = completed.response.output[0];
    assert.ok(item?.type === 'custom_tool_call');
    assert.deepEqual([item.input, item.call_id], [sampled, added.item.call_id]);
  });

  test('item_reference names an item of the stored conversation; an unknown id is a 400 naming input[i].id', async () => {
    const first = await client.responses.create({ model: SONNET, input: 'Remember the word teal.' });
    const message = first.output.find((item) => item.type === 'message');
    assert.ok(message?.type === 'message');
    await client.responses.create({ model: SONNET, previous_response_id: first.id, input: [{ type: 'item_reference', id: message.id }, { role: 'user', content: 'Which word?' }] });
    const messages = asArray(lastVendorBody(gw).messages).map((entry) => asRecord(entry));
    // Claude's turns alternate: the referenced assistant message joins the stored one, where it was referenced.
    assert.deepEqual(messages.slice(1), [
      { role: 'assistant', content: [{ type: 'text', text: first.output_text }, { type: 'text', text: first.output_text }] },
      { role: 'user', content: [{ type: 'text', text: 'Which word?' }] },
    ]);

    const unknown = await failure(client.responses.create({ model: SONNET, previous_response_id: first.id, input: [{ type: 'item_reference', id: 'msg_unknown' }] }));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.param, 'input[0].id');
    assert.match(unknown.message, /msg_unknown/);
  });

  test('image input (data URL) becomes an Anthropic image block', async () => {
    await client.responses.create({
      model: SONNET,
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is in this picture?' }, { type: 'input_image', image_url: `data:image/png;base64,${PNG_BASE64}`, detail: 'auto' }] }],
    });
    assert.deepEqual(asArray(lastVendorBody(gw).messages), [
      { role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }] },
    ]);
  });

  test('reasoning: thinking comes back as a reasoning item (summary text, signature as encrypted_content) and goes back to the vendor', async () => {
    const first = await client.responses.create({ model: SONNET, input: 'Think about it', reasoning: { effort: 'low' } });
    const sent = lastVendorBody(gw);
    assert.deepEqual(sent.thinking, { type: 'enabled', budget_tokens: 1024 });
    const reasoning = first.output[0];
    assert.ok(reasoning?.type === 'reasoning');
    assert.match(reasoning.id, /^rs_/);
    assert.deepEqual(reasoning.summary, [{ type: 'summary_text', text: thinkingText('Think about it') }]);
    assert.ok(reasoning.encrypted_content);
    assert.ok(first.usage && first.usage.output_tokens_details.reasoning_tokens > 0);
    await client.responses.create({ model: SONNET, input: [...(first.output as ResponseInputItem[]), { role: 'user', content: 'And now?' }], reasoning: { effort: 'low' } });
    const replay = asRecord(asArray(lastVendorBody(gw).messages)[0]);
    assert.deepEqual(asArray(replay.content)[0], { type: 'thinking', thinking: thinkingText('Think about it'), signature: reasoning.encrypted_content });
  });

  test('max_output_tokens reached: status incomplete with reason max_output_tokens', async () => {
    const data = await client.responses.create({ model: SONNET, input: 'Tell me a long story', max_output_tokens: 5 });
    assert.equal(data.status, 'incomplete');
    assert.deepEqual(data.incomplete_details, { reason: 'max_output_tokens' });
    assert.equal(data.usage?.output_tokens, 5);
    const last = data.output.at(-1);
    assert.ok(last?.type === 'message');
    assert.equal(last.status, 'incomplete');
  });

  test('previous_response_id continues the stored conversation; GET renders the stored response', async () => {
    const first = await client.responses.create({ model: SONNET, instructions: 'Be terse.', input: 'My name is Ada.' });
    const second = await client.responses.create({ model: SONNET, input: 'What is my name?', previous_response_id: first.id });
    assert.equal(second.previous_response_id, first.id);
    const sent = lastVendorBody(gw);
    assert.equal(sent.system, undefined, 'instructions of an earlier turn are not carried over');
    assert.deepEqual(sent.messages, [
      { role: 'user', content: [{ type: 'text', text: 'My name is Ada.' }] },
      { role: 'assistant', content: [{ type: 'text', text: first.output_text }] },
      { role: 'user', content: [{ type: 'text', text: 'What is my name?' }] },
    ]);
    const stream = await client.responses.create({ model: SONNET, input: 'And again?', previous_response_id: second.id, stream: true });
    for await (const event of stream) void event;
    assert.equal(asArray(lastVendorBody(gw).messages).length, 5, 'the whole chain is prepended');

    const fetched = await client.responses.retrieve(first.id);
    assert.equal(fetched.id, first.id);
    assert.equal(fetched.output_text, first.output_text);
    assert.deepEqual(fetched.usage, first.usage);
  });

  test('store: false answers but keeps nothing to continue or fetch', async () => {
    const unstored = await client.responses.create({ model: SONNET, input: 'Forget this', store: false });
    assert.equal((unstored as unknown as JsonRecord).store, false);
    const got = await failure(client.responses.retrieve(unstored.id));
    assert.equal(got.status, 404);
    const continued = await failure(client.responses.create({ model: SONNET, input: 'Continue', previous_response_id: unstored.id }));
    assert.equal(continued.status, 404);
    assert.equal(errorA(continued.error && { error: continued.error }).param, 'previous_response_id');
  });

  test("another account's response id (and an unknown one) is 404 in shape A, for GET and previous_response_id", async () => {
    const mine = await client.responses.create({ model: SONNET, input: 'Private' });
    const other = await gw.fundedKey({ balance: '5.00' });
    const stranger = openAiClient(gw, other.key);
    for (const id of [mine.id, 'resp_unknown']) {
      const got = await failure(stranger.responses.retrieve(id));
      assert.equal(got.status, 404);
      const body = errorA({ error: got.error });
      assert.equal(body.type, 'invalid_request_error');
      const continued = await failure(stranger.responses.create({ model: SONNET, input: 'Hi', previous_response_id: id }));
      assert.equal(continued.status, 404);
      assert.equal(errorA({ error: continued.error }).param, 'previous_response_id');
    }
    assert.equal(charges(await ledger(gw, { userId: other.userId })).length, 0, 'nothing charged for refused calls');
  });

  test('a key of the same user in the same account reads the response; the user’s org key (another account) does not', async () => {
    const mine = await client.responses.create({ model: SONNET, input: 'Shared' });
    const sameUser = await gw.fundedKey({ userId });
    assert.equal((await openAiClient(gw, sameUser.key).responses.retrieve(mine.id)).id, mine.id);
    const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Org', ownerId: userId, balance: '5.00' });
    const orgKey = await gw.fundedKey({ userId, orgId: org.body.id });
    assert.equal((await failure(openAiClient(gw, orgKey.key).responses.retrieve(mine.id))).status, 404);
  });
});

describe('POST /v1/responses: the checks every model endpoint makes', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('a retired model with an analogue is served by it: deprecation headers, warnings, model kept, billed at the requested price', async () => {
    const { key, userId } = await gw.fundedKey();
    const retired = 'claude-3-5-haiku-20241022';
    const { data, response } = await openAiClient(gw, key).responses.create({ model: retired, input: 'Hello old model' }).withResponse();
    assert.equal(response.headers.get('deprecation'), 'true');
    assert.ok(response.headers.get('sunset'));
    assert.equal(response.headers.get('x-model-requested'), retired);
    assert.equal(response.headers.get('x-model-served'), 'claude-haiku-4-5');
    assert.match(response.headers.get('warning') ?? '', /^299 - "/);
    assert.equal(data.model, retired);
    const warnings = asArray((data as unknown as JsonRecord).warnings);
    assert.equal(asRecord(warnings[0]).code, 'DEPRECATED_MODEL');
    assert.equal(lastVendorBody(gw).model, 'claude-haiku-4-5-20251001');
    assert.equal(await chargeOf(gw, userId, response.headers.get('x-request-id')), -usageCost(retired, data));

    const raw = await postRaw(gw, '/v1/responses', { key, body: { model: retired, input: 'Hello stream', stream: true } });
    const frames = raw.text.split('\n\n').filter((frame) => frame.includes('data:'));
    const first = asRecord(JSON.parse(frames[0]!.split('data: ')[1]!));
    assert.equal(first.type, 'response.created');
    assert.equal(asRecord(asArray(first.warnings)[0]).code, 'DEPRECATED_MODEL');
    frames.forEach((frame, index) => {
      const data = asRecord(JSON.parse(frame.split('data: ')[1]!));
      if (data.response) assert.equal(asRecord(data.response).model, retired);
      if (index > 0) assert.equal(data.warnings, undefined, 'warnings only in the first frame');
    });
  });

  test('a retired model without an analogue: 410 in shape A, code model_deprecated, the vendor not called', async () => {
    const { key } = await gw.fundedKey();
    const calls = gw.simulator.requests.length;
    const raw = await postRaw(gw, '/v1/responses', { key, body: { model: 'claude-3-opus-20240229', input: 'Hi' } });
    assert.equal(raw.status, 410);
    const error = errorA(raw.json);
    assert.deepEqual([error.type, error.code, error.param], ['model_deprecated', 'model_deprecated', 'model']);
    assert.equal(gw.simulator.requests.length, calls);
  });

  test('a model outside the key’s allowed models: 403 permission_error; an unknown model: 404', async () => {
    const { key } = await gw.fundedKey({ allowedModels: ['gpt-4o'] });
    const forbidden = await postRaw(gw, '/v1/responses', { key, body: { model: SONNET, input: 'Hi' } });
    assert.equal(forbidden.status, 403);
    assert.equal(errorA(forbidden.json).type, 'permission_error');
    const unknown = await postRaw(gw, '/v1/responses', { key, body: { model: 'no-such-model', input: 'Hi' } });
    assert.equal(unknown.status, 404);
    assert.equal(errorA(unknown.json).param, 'model');
  });

  test('insufficient balance: 402 before the vendor is called', async () => {
    const { key } = await gw.fundedKey({ balance: '0.00' });
    const calls = gw.simulator.requests.length;
    for (const stream of [false, true]) {
      const raw = await postRaw(gw, '/v1/responses', { key, body: { model: SONNET, input: 'Hi', stream } });
      assert.equal(raw.status, 402);
      assert.equal(errorA(raw.json).type, 'insufficient_balance_error');
    }
    assert.equal(gw.simulator.requests.length, calls);
  });

  test('no key: 401 in shape A', async () => {
    const raw = await postRaw(gw, '/v1/responses', { body: { model: SONNET, input: 'Hi' } });
    assert.equal(raw.status, 401);
    assert.equal(errorA(raw.json).type, 'unauthorized_request_error');
    const got = await fetch(`${gw.url}/v1/responses/resp_x`);
    assert.equal(got.status, 401);
  });

  test('bad input: 400 in shape A naming the param, the vendor not called', async () => {
    const { key } = await gw.fundedKey();
    const calls = gw.simulator.requests.length;
    const cases: Array<[JsonRecord, string]> = [
      [{ input: 'Hi' }, 'model'],
      [{ model: SONNET, input: 42 }, 'input'],
      [{ model: SONNET, input: 'Hi', temperature: 7 }, 'temperature'],
      [{ model: SONNET, input: 'Hi', max_output_tokens: -1 }, 'max_output_tokens'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'local_shell' }] }, 'tools[0]'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } }, 'tool_choice'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'web_search' }], tool_choice: 'required' }, 'tool_choice'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'custom' }] }, 'tools[0].name'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'web_search' }] }] }, 'tools[0].tools[0]'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'namespace', name: 'n'.repeat(60), tools: [{ type: 'function', name: 'spawn' }] }] }, 'tools[0].tools[0].name'],
      [{ model: SONNET, input: 'Hi', tools: [{ type: 'function' }] }, 'tools[0].name'],
      [{ model: SONNET, input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].id'],
      [{ model: SONNET, input: [{ type: 'computer_call_output', call_id: 'c' }] }, 'input[0].type'],
      [{ model: SONNET, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'ftp://x/y.png' }] }] }, 'input[0].content[0].image_url'],
      [{ model: SONNET, input: [{ role: 'user', content: [{ type: 'input_audio' }] }] }, 'input[0].content[0].type'],
      [{ model: SONNET, input: [{ type: 'function_call_output', output: 'x' }] }, 'input[0].call_id'],
      [{ model: SONNET, input: [] }, 'input'],
      [{ model: SONNET, input: 'Hi', tool_choice: { type: 'web_search_preview' } }, 'tool_choice'],
    ];
    for (const [body, param] of cases) {
      const raw = await postRaw(gw, '/v1/responses', { key, body });
      assert.equal(raw.status, 400, `${JSON.stringify(body)} → ${raw.status} ${raw.text}`);
      const error = errorA(raw.json);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param, `${JSON.stringify(body)} → ${raw.text}`);
    }
    assert.equal(gw.simulator.requests.length, calls);
  });

  test('a client that cuts a stream pays for what was produced, once', async () => {
    const { key, userId } = await gw.fundedKey();
    gw.simulator.options.chunkDelayMs = 200;
    try {
      const controller = new AbortController();
      const response = await fetch(`${gw.url}/v1/responses`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: SONNET, input: 'Please write a long story', stream: true }),
        signal: controller.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let seen = '';
      while (!seen.includes('response.output_text.delta')) {
        const { value, done } = await reader.read();
        assert.ok(!done, 'the stream ended before any text');
        seen += decoder.decode(value, { stream: true });
      }
      controller.abort();
      await reader.cancel().catch(() => undefined);
      const requestId = response.headers.get('x-request-id');
      const charged = await chargeOf(gw, userId, requestId);
      const full = expectedCost(SONNET, { prompt_tokens: 10, completion_tokens: 16 }).total;
      assert.ok(charged < 0n && -charged < full, `paid ${-charged} µ for part of a ${full} µ answer`);
      await new Promise((resolve) => setTimeout(resolve, 200 * 10));
      assert.equal(charges(await ledger(gw, { userId })).filter((row) => row.requestId === requestId).length, 1, 'nothing booked later');
      const row = await requestRow(gw, userId, requestId);
      assert.equal(micros(row.cost), -charged);
    } finally {
      gw.simulator.options.chunkDelayMs = 0;
    }
  });
});

describe('POST /v1/responses with an OpenAI model (passed through)', () => {
  const GPT = 'gpt-4.1-mini';
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  let userId: string;

  const lastOpenAiBody = (): JsonRecord => asRecord(gw.simulator.lastRequest('/v1/responses')?.json, 'the Responses request');

  /** Micro-units of a Responses usage at gpt-4.1-mini's prices: cached input at the cache-read price (0.1× input). */
  function passthroughCost(usage: OpenAiResponse['usage']): bigint {
    assert.ok(usage);
    const cached = usage.input_tokens_details.cached_tokens;
    const nanosPer1k = { input: 400_000n, cached: 40_000n, output: 1_600_000n };
    const round = (scaled: bigint): bigint => (scaled + 500_000n) / 1_000_000n;
    const prompt = round(BigInt(usage.input_tokens - cached) * nanosPer1k.input + BigInt(cached) * nanosPer1k.cached);
    return prompt + round(BigInt(usage.output_tokens) * nanosPer1k.output);
  }

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '10.00' }));
    client = openAiClient(gw, key);
  });
  after(async () => {
    await gw?.close();
  });

  test('non-stream: the body goes to the vendor as sent (unknown fields too), its answer comes back, charged once from its usage', async () => {
    const body = { model: GPT, instructions: 'Be brief.', input: 'Hello GPT', metadata: { run: 'a' }, prompt_cache_key: 'k1' };
    const { data, response } = await client.responses.create(body).withResponse();
    assert.deepEqual(lastOpenAiBody(), body);
    assert.equal(gw.simulator.lastRequest('/v1/responses')?.headers.authorization, 'Bearer sim-openai');
    assert.equal(data.object, 'response');
    assert.match(data.id, /^resp_/);
    assert.equal(data.status, 'completed');
    assert.ok(data.output_text.length > 0);
    const requestId = response.headers.get('x-request-id');
    const charged = await chargeOf(gw, userId, requestId);
    assert.equal(charged, -passthroughCost(data.usage));
    assert.equal(micros(response.headers.get('x-tollgate-cost') ?? 'missing'), -charged);
    const row = await requestRow(gw, userId, requestId);
    assert.deepEqual([row.endpoint, row.model, row.input_tokens + row.cache_read_tokens, row.output_tokens], ['responses', GPT, data.usage!.input_tokens, data.usage!.output_tokens]);
    assert.equal(micros(row.cost), -charged);
  });

  test('stream: the vendor events relayed in order, charged once from response.completed', async () => {
    const { data: stream, response } = await client.responses.create({ model: GPT, input: 'Stream please', stream: true }).withResponse();
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    assert.equal(events[0]?.type, 'response.created');
    assert.deepEqual(events.map((event) => event.sequence_number), events.map((_, index) => index));
    const completed = events.at(-1);
    assert.ok(completed?.type === 'response.completed');
    const text = events.map((event) => (event.type === 'response.output_text.delta' ? event.delta : '')).join('');
    assert.ok(text.length > 0);
    assert.equal(await chargeOf(gw, userId, response.headers.get('x-request-id')), -passthroughCost(completed.response.usage));
  });

  test('tool call, then function_call_output with previous_response_id; cached input tokens billed at the cache price', async () => {
    const long = `Weather report please. ${'lorem ipsum dolor '.repeat(300)}`;
    const first = await client.responses.create({ model: GPT, input: long, tools, tool_choice: 'required' });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call');
    assert.equal(call.name, 'get_weather');
    const { data: second, response } = await client.responses
      .create({ model: GPT, previous_response_id: first.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temperature": 21}' }], tools })
      .withResponse();
    assert.equal(lastOpenAiBody().previous_response_id, first.id);
    assert.ok(second.output_text.length > 0);
    assert.ok(second.usage && second.usage.input_tokens_details.cached_tokens > 0, 'the follow-up reads the cached prefix');
    const charged = await chargeOf(gw, userId, response.headers.get('x-request-id'));
    assert.equal(charged, -passthroughCost(second.usage));
    const row = await requestRow(gw, userId, response.headers.get('x-request-id'));
    assert.equal(row.cache_read_tokens, second.usage.input_tokens_details.cached_tokens);
  });

  test('GET is forwarded for the account that made the response; another account gets 404 and the vendor is not asked', async () => {
    const made = await client.responses.create({ model: GPT, input: 'Keep me' });
    const fetched = await client.responses.retrieve(made.id);
    assert.equal(fetched.id, made.id);
    assert.equal(fetched.output_text, made.output_text);

    const other = await gw.fundedKey();
    const stranger = openAiClient(gw, other.key);
    const calls = gw.simulator.requests.length;
    assert.equal((await failure(stranger.responses.retrieve(made.id))).status, 404);
    const continued = await failure(stranger.responses.create({ model: GPT, input: 'Hi', previous_response_id: made.id }));
    assert.equal(continued.status, 404);
    assert.equal(errorA({ error: continued.error }).param, 'previous_response_id');
    assert.equal(gw.simulator.requests.length, calls, 'the vendor was not asked');
  });

  test('built-in tools pass through for OpenAI models; a Claude response cannot be continued by an OpenAI model', async () => {
    const claude = await client.responses.create({ model: SONNET, input: 'Hi Claude' });
    const raw = await postRaw(gw, '/v1/responses', { key, body: { model: GPT, input: 'Hi', previous_response_id: claude.id } });
    assert.equal(raw.status, 400);
    assert.equal(errorA(raw.json).param, 'previous_response_id');
    await client.responses.create({ model: GPT, input: 'Hi', tools: [...tools, { type: 'web_search' }] }).catch(() => undefined);
    assert.deepEqual(asArray(lastOpenAiBody().tools).at(-1), { type: 'web_search' });
  });

  test('a vendor 4xx passes through in its own shape', async () => {
    const raw = await postRaw(gw, '/v1/responses', { key, body: { model: GPT, input: [{ type: 'function_call_output', output: 'no call id' }] } });
    assert.equal(raw.status, 400);
    assert.equal(errorA(raw.json).type, 'invalid_request_error');
  });
});

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`stored responses on ${database}: ownership, the conversation chain, retention`, () => {
    let gw: TestGateway;

    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    test('a chain continues across turns for its owner only, and rows older than TOLLGATE_RESPONSES_DAYS are deleted', async () => {
      const { key } = await gw.fundedKey();
      const client = openAiClient(gw, key);
      const first = await client.responses.create({ model: SONNET, input: 'Turn one' });
      const second = await client.responses.create({ model: SONNET, input: 'Turn two', previous_response_id: first.id });
      await client.responses.create({ model: SONNET, input: 'Turn three', previous_response_id: second.id });
      assert.deepEqual(
        asArray(lastVendorBody(gw).messages).map((message) => asRecord(message).role),
        ['user', 'assistant', 'user', 'assistant', 'user'],
      );
      const stranger = openAiClient(gw, (await gw.fundedKey()).key);
      assert.equal((await failure(stranger.responses.retrieve(first.id))).status, 404);
      assert.equal((await client.responses.retrieve(second.id)).id, second.id);

      const days = gw.app.services.config.responsesDays;
      assert.equal(days, 30);
      const rows = async (): Promise<number> => (await gw.storage.db.selectFrom('responses').select('id').execute()).length;
      assert.equal(await rows(), 3);
      gw.clock.advance(days * 86_400_000 + 60_000);
      await gw.app.services.responses.maintain(true);
      assert.equal(await rows(), 0);
      assert.equal((await failure(client.responses.retrieve(first.id))).status, 404);
    });
  });
}
