import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Anthropic, { APIError } from '@anthropic-ai/sdk';
import type { MessageCreateParamsNonStreaming } from '@anthropic-ai/sdk/resources/messages';
import { anthropicPromptTokens, countTokens, replyText, sampleFromSchema, thinkingSignature, thinkingText, toolResultReplyText } from '../simulator/server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import {
  anthropicClient,
  asRecord,
  balanceMicros,
  catalogPrices,
  chargeOf,
  chargeRows,
  errorB,
  messagesCostMicros,
  postMessages,
  sseEvents,
  valuesOfKey,
  type MessagesUsage,
} from './helpers/messages-e2e.ts';

const MODEL = 'claude-opus-4-5';
const UPSTREAM = 'claude-opus-4-5-20251101';
const RETIRED = 'claude-3-5-haiku-20241022';
const ask = (text: string, extra: Partial<MessageCreateParamsNonStreaming> = {}): MessageCreateParamsNonStreaming => ({
  model: MODEL,
  max_tokens: 256,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

describe('POST /v1/messages through the official Anthropic SDK', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;
  let client: Anthropic;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '20.00' }));
    client = anthropicClient(gw, key);
  });
  after(async () => {
    await gw?.close();
  });

  test('messages.create answers in the vendor format and is charged exactly from its usage', async () => {
    const text = 'What is the capital of France?';
    const { data: message, response } = await client.messages.create(ask(text)).withResponse();
    assert.equal(message.type, 'message');
    assert.equal(message.role, 'assistant');
    assert.equal(message.model, UPSTREAM);
    assert.deepEqual(message.content, [{ type: 'text', text: replyText(text, 16), }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, countTokens(text));
    assert.equal(message.usage.output_tokens, countTokens(replyText(text, 16)));
    const charge = await chargeOf(gw, { userId }, response.headers.get('x-request-id'));
    assert.equal(charge.micros, messagesCostMicros(catalogPrices(MODEL), message.usage));
    assert.equal(charge.row.model, MODEL);
  });

  test('messages.stream(...).finalMessage() equals messages.create in content, usage and charge', async () => {
    const params = ask('Tell me about streams');
    const { data: created, response } = await client.messages.create(params).withResponse();
    const stream = client.messages.stream(params);
    let streamedText = '';
    stream.on('text', (delta) => (streamedText += delta));
    const final = await stream.finalMessage();
    const streamResponse = (await stream.withResponse()).response;
    assert.deepEqual(final.content, created.content);
    assert.deepEqual(final.usage, created.usage);
    assert.equal(final.stop_reason, created.stop_reason);
    assert.equal(streamedText, replyText('Tell me about streams', 16));
    const [createdCharge, streamedCharge] = [
      await chargeOf(gw, { userId }, response.headers.get('x-request-id')),
      await chargeOf(gw, { userId }, streamResponse.headers.get('x-request-id')),
    ];
    assert.equal(streamedCharge.micros, createdCharge.micros);
  });

  test('a custom tool gives tool_use, and the tool_result round trip gives the answer', async () => {
    const tool = {
      name: 'get_weather',
      description: 'Current weather of a city',
      input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, days: { type: 'integer' } }, required: ['city'] },
    };
    const question = { role: 'user' as const, content: 'Weather in Paris?' };
    const first = await client.messages.create(ask('', { messages: [question], tools: [tool] }));
    assert.equal(first.stop_reason, 'tool_use');
    const call = first.content.find((block) => block.type === 'tool_use');
    assert.ok(call && call.type === 'tool_use', JSON.stringify(first.content));
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.input, sampleFromSchema(tool.input_schema));
    assert.deepEqual(asRecord(gw.simulator.lastRequest('/v1/messages')?.json).tools, [tool], 'the custom tool reached the vendor unchanged');

    const second = await client.messages.create(
      ask('', {
        tools: [tool],
        messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny, 24 C' }] }],
      }),
    );
    assert.equal(second.stop_reason, 'end_turn');
    assert.deepEqual(second.content, [{ type: 'text', text: toolResultReplyText('Sunny, 24 C'), }]);
  });

  test('thinking blocks pass through: in the answer, in the stream and back in the next request', async () => {
    const text = 'Think about prime numbers';
    const params = ask(text, { max_tokens: 2048, thinking: { type: 'enabled', budget_tokens: 1024 } });
    const message = await client.messages.create(params);
    const thought = thinkingText(text);
    assert.deepEqual(message.content[0], { type: 'thinking', thinking: thought, signature: thinkingSignature(thought) });
    assert.equal(message.content[1]?.type, 'text');
    const streamed = await client.messages.stream(params).finalMessage();
    assert.deepEqual(streamed.content, message.content);

    await client.messages.create({ ...params, messages: [...params.messages, { role: 'assistant', content: message.content }, { role: 'user', content: 'And then?' }] });
    const forwarded = asRecord(gw.simulator.lastRequest('/v1/messages')?.json);
    const turns = forwarded.messages as Array<{ content: unknown }>;
    assert.deepEqual(asRecord(turns[1]).content, JSON.parse(JSON.stringify(message.content)), 'the thinking block went back to the vendor unchanged');
  });

  test('countTokens returns {input_tokens} and is not charged', async () => {
    const before = await balanceMicros(gw, { userId });
    const chargesBefore = (await chargeRows(gw, { userId })).length;
    const body = { model: MODEL, system: 'You are terse.', messages: [{ role: 'user' as const, content: 'Count the tokens of this prompt please' }] };
    const counted = await client.messages.countTokens(body);
    assert.deepEqual(counted, { input_tokens: anthropicPromptTokens(body) });
    assert.equal(gw.simulator.lastRequest('/v1/messages')?.path, '/v1/messages/count_tokens');
    assert.equal(await balanceMicros(gw, { userId }), before);
    assert.equal((await chargeRows(gw, { userId })).length, chargesBefore);
  });

  test('the key is taken from x-api-key and from Authorization: Bearer; it is never sent to the vendor', async () => {
    const body = ask('auth check');
    const viaHeader = await postMessages(gw, body, { key });
    assert.equal(viaHeader.status, 200, viaHeader.text);
    const viaBearer = await postMessages(gw, body, { key, bearer: true });
    assert.equal(viaBearer.status, 200, viaBearer.text);
    const vendorHeaders = gw.simulator.lastRequest('/v1/messages')?.headers ?? {};
    assert.notEqual(vendorHeaders['x-api-key'], key);
    assert.equal(vendorHeaders.authorization, undefined);
    assert.ok(!Object.values(vendorHeaders).some((value) => value.includes(key)), 'the client key is not forwarded');
  });

  test('a missing or bad key is 401 in shape A even on this endpoint, and nothing reaches the vendor', async () => {
    const sent = gw.simulator.requests.length;
    const unauthorized = { error: { type: 'unauthorized_request_error', message: 'Unauthorized', param: null, code: null } };
    for (const options of [{}, { key: 'tg-not-a-key' }, { key: 'tg-not-a-key', bearer: true }, { key: `${key}x` }]) {
      const response = await postMessages(gw, ask('no key'), options);
      assert.equal(response.status, 401, JSON.stringify(options));
      assert.deepEqual(response.json, unauthorized);
    }
    await assert.rejects(anthropicClient(gw, 'tg-wrong').messages.create(ask('sdk')), (error: unknown) => {
      assert.ok(error instanceof Anthropic.AuthenticationError);
      assert.deepEqual(error.error, unauthorized);
      return true;
    });
    assert.equal(gw.simulator.requests.length, sent);
  });

  /** Runs a failing SDK call and returns its shape B error after checking the class and status. */
  async function sdkFailure(params: MessageCreateParamsNonStreaming, errorClass: new (...args: never[]) => APIError, status: number | undefined, sdk = client): Promise<{ type: string; message: string }> {
    let caught: unknown;
    await sdk.messages.create(params).catch((error: unknown) => (caught = error));
    assert.ok(caught instanceof errorClass, `expected ${errorClass.name}, got ${String(caught)}`);
    if (status !== undefined) assert.equal(caught.status, status);
    return errorB(caught.error);
  }

  test('another family or an unknown id: 404 not_found_error, with different messages, nothing forwarded', async () => {
    const sent = gw.simulator.requests.length;
    const otherFamily = await sdkFailure(ask('hi', { model: 'gpt-4o' }), Anthropic.NotFoundError, 404);
    const unknown = await sdkFailure(ask('hi', { model: 'claude-imaginary-9' }), Anthropic.NotFoundError, 404);
    assert.equal(otherFamily.type, 'not_found_error');
    assert.equal(unknown.type, 'not_found_error');
    assert.notEqual(otherFamily.message, unknown.message);
    assert.equal(gw.simulator.requests.length, sent);
  });

  test('a model outside the key allowed list: 403 permission_error saying it is not allowed for this key', async () => {
    const limited = await gw.fundedKey({ allowedModels: ['claude-haiku-4-5'] });
    const sdk = anthropicClient(gw, limited.key);
    const error = await sdkFailure(ask('hi'), Anthropic.PermissionDeniedError, 403, sdk);
    assert.equal(error.type, 'permission_error');
    assert.match(error.message, /not allowed/i);
    assert.match(error.message, /API key/i);
    const allowed = await sdk.messages.create(ask('hi', { model: 'claude-haiku-4-5' }));
    assert.equal(allowed.type, 'message');
  });

  test('a zero balance: 402 billing_error, nothing forwarded', async () => {
    const broke = await gw.fundedKey({ balance: '0' });
    const sent = gw.simulator.requests.length;
    const error = await sdkFailure(ask('hi'), Anthropic.PaymentRequiredError, 402, anthropicClient(gw, broke.key));
    assert.equal(error.type, 'billing_error');
    assert.equal(gw.simulator.requests.length, sent);
  });

  test('the code_execution tool is refused with 400 before anything reaches the vendor', async () => {
    const sent = gw.simulator.requests.length;
    const params = ask('run code', { tools: [{ type: 'code_execution_20250825', name: 'code_execution' }] });
    const error = await sdkFailure(params, Anthropic.BadRequestError, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(gw.simulator.requests.length, sent);
  });

  test('an unknown top-level field is forwarded and the vendor 400 comes back as the vendor body, not charged', async () => {
    const chargesBefore = (await chargeRows(gw, { userId })).length;
    const response = await postMessages(gw, { ...ask('hi'), frobnicate: { level: 3 } }, { key });
    assert.deepEqual(asRecord(gw.simulator.lastRequest('/v1/messages')?.json).frobnicate, { level: 3 });
    assert.equal(response.status, 400);
    assert.deepEqual(errorB(response.json), { type: 'invalid_request_error', message: 'frobnicate: Extra inputs are not permitted' });
    // Our own error would carry our request id; the vendor's body comes through with its request id scrubbed (DESIGN §14).
    assert.equal(asRecord(response.json).request_id, 'req_***', 'the vendor body was passed on, its request id scrubbed');
    assert.equal((await chargeRows(gw, { userId })).length, chargesBefore);
  });

  test('vendor 529 and 500 (stream and not) give 5xx in shape B and are not charged', async () => {
    const before = await balanceMicros(gw, { userId });
    for (const [status, stream] of [[529, false], [500, false], [529, true]] as const) {
      gw.simulator.addFault({ status, match: { path: '/v1/messages', model: UPSTREAM } });
      const response = await postMessages(gw, { ...ask(`fault ${status}`), stream }, { key });
      assert.ok(response.status >= 500 && response.status < 600, `${status}/${stream}: ${response.status} ${response.text}`);
      errorB(response.json);
    }
    gw.simulator.addFault({ status: 529, match: { path: '/v1/messages', model: UPSTREAM } });
    await sdkFailure(ask('sdk fault'), Anthropic.InternalServerError, undefined);
    assert.equal(await balanceMicros(gw, { userId }), before);
  });

  test('a retired model with an analogue: served by it, headers, warnings and model of the request, billed as requested', async () => {
    const response = await postMessages(gw, ask('hi', { model: RETIRED }), { key });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('deprecation'), 'true');
    assert.equal(response.headers.get('sunset'), new Date('2026-02-19T00:00:00Z').toUTCString());
    assert.equal(response.headers.get('x-model-requested'), RETIRED);
    assert.equal(response.headers.get('x-model-served'), 'claude-haiku-4-5');
    const warning = /^299 - "(.+)"$/.exec(response.headers.get('warning') ?? '')?.[1];
    assert.ok(warning?.includes(RETIRED) && warning.includes('claude-haiku-4-5'), `Warning: ${warning}`);
    const body = asRecord(response.json);
    assert.deepEqual(body.warnings, [{ code: 'DEPRECATED_MODEL', message: warning }]);
    assert.equal(body.model, RETIRED);
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/messages')?.json).model, 'claude-haiku-4-5-20251001');
    const charge = await chargeOf(gw, { userId }, response.headers.get('x-request-id'));
    assert.equal(charge.row.model, RETIRED);
    assert.equal(charge.micros, messagesCostMicros(catalogPrices(RETIRED), asRecord(body.usage) as unknown as MessagesUsage));
  });

  test('a retired model streamed: warnings only in message_start, model replaced in every frame', async () => {
    const response = await postMessages(gw, { ...ask('stream me', { model: RETIRED }), stream: true }, { key });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-model-served'), 'claude-haiku-4-5');
    const events = sseEvents(response.text);
    assert.equal(events[0]?.event, 'message_start');
    assert.equal(events.at(-1)?.event, 'message_stop');
    assert.deepEqual(events[0]?.data.warnings, [{ code: 'DEPRECATED_MODEL', message: /^299 - "(.+)"$/.exec(response.headers.get('warning') ?? '')?.[1] }]);
    assert.ok(events.slice(1).every((event) => event.data.warnings === undefined), 'no warnings after the first frame');
    const models = valuesOfKey(events.map((event) => event.data), 'model');
    assert.ok(models.length > 0);
    assert.ok(models.every((model) => model === RETIRED), `every model field is the requested id: ${JSON.stringify(models)}`);
    assert.ok(!response.text.includes('claude-haiku-4-5-20251001'), 'the serving model id appears nowhere in the stream');
  });

  test('a retired model without an analogue: 410 invalid_request_error in shape B', async () => {
    const response = await postMessages(gw, ask('hi', { model: 'claude-3-opus-20240229' }), { key });
    assert.equal(response.status, 410);
    assert.equal(errorB(response.json).type, 'invalid_request_error');
  });

  test('the [1m] suffix of coding clients works', async () => {
    const message = await client.messages.create(ask('long context', { model: 'claude-sonnet-4-5[1m]' }));
    assert.equal(message.type, 'message');
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/messages')?.json).model, 'claude-sonnet-4-5-20250929');
  });
});
