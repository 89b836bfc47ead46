import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionCreateParamsNonStreaming } from 'openai/resources/chat/completions';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asRecord, balanceMicros, charges, errorA, ledger, openAiClient, postRaw, type RawResponse } from './helpers/e2e.ts';

const MODEL = 'gpt-4.1';
const CHAT = { model: MODEL, messages: [{ role: 'user' as const, content: 'Hello' }] };
const UNAUTHORIZED = { error: { message: 'Unauthorized', type: 'unauthorized_request_error', param: null, code: null } };

/** Runs a call that must fail and returns what it threw. */
async function failure(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
  } catch (error) {
    return error;
  }
  return assert.fail('the call was expected to fail');
}

/** The SDK error of a failed call: of the given class and status. */
type SdkErrorClass = abstract new (...args: never[]) => InstanceType<typeof OpenAI.APIError>;

async function sdkError(call: Promise<unknown>, errorClass: SdkErrorClass, status: number): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await failure(call);
  assert.ok(error instanceof errorClass, `expected ${errorClass.name}, got ${error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error)}`);
  assert.ok(error instanceof OpenAI.APIError);
  assert.equal(error.status, status);
  return error;
}

/** Every error response: the status, shape A, a request id, never a 500. */
function assertErrorResponse(raw: RawResponse, status: number): ReturnType<typeof errorA> {
  assert.equal(raw.status, status, raw.text);
  assert.notEqual(raw.status, 500);
  assert.match(raw.headers.get('x-request-id') ?? '', /^req_/, 'x-request-id on the error');
  return errorA(raw.json);
}

describe('errors of the OpenAI-compatible endpoints', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  let userId: string;
  let initialBalance: bigint;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '5.00' }));
    client = openAiClient(gw, key);
    initialBalance = await balanceMicros(gw, { userId });
  });
  after(async () => {
    await gw?.close();
  });

  test('missing key: AuthenticationError 401 with the exact Unauthorized body', async () => {
    const error = await sdkError(client.chat.completions.create(CHAT, { headers: { Authorization: null } }), OpenAI.AuthenticationError, 401);
    assert.equal(error.type, 'unauthorized_request_error');
    const raw = await postRaw(gw, '/v1/chat/completions', { body: CHAT });
    assertErrorResponse(raw, 401);
    assert.deepEqual(raw.json, UNAUTHORIZED);
    const models = await fetch(`${gw.url}/v1/models`);
    assert.equal(models.status, 401);
    assert.deepEqual(await models.json(), UNAUTHORIZED);
  });

  test('bad key: AuthenticationError 401 with the exact Unauthorized body, in both header forms', async () => {
    const bad = 'tg-this-key-does-not-exist-0000000000000000';
    await sdkError(openAiClient(gw, bad).chat.completions.create(CHAT), OpenAI.AuthenticationError, 401);
    for (const authorization of [bad, `Bearer ${bad}`]) {
      const raw = await postRaw(gw, '/v1/chat/completions', { body: CHAT, headers: { authorization } });
      assertErrorResponse(raw, 401);
      assert.deepEqual(raw.json, UNAUTHORIZED);
    }
  });

  test('a good key works as `Authorization: <key>` and as `Authorization: Bearer <key>`', async () => {
    const { key: other } = await gw.fundedKey({ balance: '1.00' });
    for (const authorization of [other, `Bearer ${other}`]) {
      const raw = await postRaw(gw, '/v1/chat/completions', { body: CHAT, headers: { authorization } });
      assert.equal(raw.status, 200, `${authorization.slice(0, 7)}…: ${raw.text}`);
      const models = await fetch(`${gw.url}/v1/models`, { headers: { authorization } });
      assert.equal(models.status, 200);
    }
  });

  test('a revoked key fails at once', async () => {
    const { key: doomed, keyId } = await gw.fundedKey({ balance: '1.00' });
    const doomedClient = openAiClient(gw, doomed);
    await doomedClient.chat.completions.create(CHAT);
    const revoked = await gw.admin('DELETE', `/keys/${keyId}`);
    assert.equal(revoked.status, 200);
    await sdkError(doomedClient.chat.completions.create(CHAT), OpenAI.AuthenticationError, 401);
    const raw = await postRaw(gw, '/v1/chat/completions', { key: doomed, body: CHAT });
    assertErrorResponse(raw, 401);
    assert.deepEqual(raw.json, UNAUTHORIZED);
  });

  test('a model outside the key allowedModels: PermissionDeniedError 403', async () => {
    const { key: limited } = await gw.fundedKey({ balance: '1.00', allowedModels: ['gpt-4.1-mini'] });
    const sent = gw.simulator.requests.length;
    const error = await sdkError(openAiClient(gw, limited).chat.completions.create(CHAT), OpenAI.PermissionDeniedError, 403);
    assert.equal(error.param, 'model');
    assert.equal(gw.simulator.requests.length, sent, 'nothing reached the vendor');
    const raw = await postRaw(gw, '/v1/chat/completions', { key: limited, body: CHAT });
    assert.equal(assertErrorResponse(raw, 403).type, 'permission_error');
    const allowed = await openAiClient(gw, limited).chat.completions.create({ ...CHAT, model: 'gpt-4.1-mini' });
    assert.equal(allowed.model, 'gpt-4.1-mini');
  });

  test('an unknown model: NotFoundError 404', async () => {
    const error = await sdkError(client.chat.completions.create({ ...CHAT, model: 'gpt-does-not-exist' }), OpenAI.NotFoundError, 404);
    assert.equal(error.param, 'model');
    assert.match(error.message, /gpt-does-not-exist/);
    assertErrorResponse(await postRaw(gw, '/v1/embeddings', { key, body: { model: 'no-such-embedding', input: 'x' } }), 404);
  });

  test('malformed JSON: 400 `body: …`', async () => {
    const raw = await postRaw(gw, '/v1/chat/completions', { key, rawBody: '{"model": "gpt-4.1", "messages": [' });
    const error = assertErrorResponse(raw, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /^body: \S/);
  });

  test("a URL the router refuses (a parameter past 100 characters, a bad escape) is a 400 in the path's shape, not Fastify's body", async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['GET', `/v1/files/${'f'.repeat(101)}`, /^path: a parameter is longer than 100 characters$/],
      ['GET', '/v1/files/%zz', /^path: is not a valid URL$/],
      ['POST', `/api/v1/assistants/${'a'.repeat(201)}/like`, /^path: a parameter is longer than 100 characters$/],
    ];
    for (const [method, path, message] of cases) {
      const response = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${key}` } });
      assert.equal(response.status, 400, path);
      const error = errorA(await response.json());
      assert.match(error.message, message, path);
      assert.deepEqual([error.type, error.param, error.code], ['invalid_request_error', 'path', null], path);
    }
  });

  test('wrong types: BadRequestError 400 with message `<param>: <constraint>`', async () => {
    const cases: Array<[param: string, body: Record<string, unknown>]> = [
      ['messages', { model: MODEL, messages: 'x' }],
      ['temperature', { ...CHAT, temperature: 5 }],
      ['model', { messages: CHAT.messages }],
      ['n', { ...CHAT, n: 'two' }],
    ];
    for (const [param, body] of cases) {
      const error = await sdkError(client.chat.completions.create(body as unknown as ChatCompletionCreateParamsNonStreaming), OpenAI.BadRequestError, 400);
      assert.equal(error.type, 'invalid_request_error', param);
      assert.equal(error.param, param);
      const raw = await postRaw(gw, '/v1/chat/completions', { key, body });
      const shown = assertErrorResponse(raw, 400);
      assert.ok(shown.message.startsWith(`${param}: `) && shown.message.length > param.length + 2, `message "${shown.message}" is "${param}: <constraint>"`);
    }
  });

  test('insufficient balance: 402 insufficient_balance_error, nothing forwarded', async () => {
    const { key: broke } = await gw.fundedKey({ balance: '0' });
    const sent = gw.simulator.requests.length;
    const error = await sdkError(openAiClient(gw, broke).chat.completions.create(CHAT), OpenAI.APIError, 402);
    assert.equal(error.type, 'insufficient_balance_error');
    const raw = await postRaw(gw, '/v1/chat/completions', { key: broke, body: { ...CHAT, stream: true } });
    assert.equal(assertErrorResponse(raw, 402).type, 'insufficient_balance_error');
    assert.equal(gw.simulator.requests.length, sent);
  });

  test('vendor 500: InternalServerError family (502), not charged, no ledger entry', async () => {
    for (const stream of [false, true]) {
      const before = await balanceMicros(gw, { userId });
      gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 500 });
      const error = await sdkError(
        stream ? client.chat.completions.create({ ...CHAT, stream: true }) : client.chat.completions.create(CHAT),
        OpenAI.InternalServerError,
        502,
      );
      const requestId = error.headers?.get('x-request-id');
      assert.ok(requestId);
      gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 500 });
      assertErrorResponse(await postRaw(gw, '/v1/chat/completions', { key, body: { ...CHAT, stream } }), 502);
      assert.equal(await balanceMicros(gw, { userId }), before, `stream=${stream}: balance unchanged`);
      assert.equal((await ledger(gw, { userId })).filter((row) => row.requestId === requestId).length, 0);
    }
  });

  test('vendor 429: RateLimitError 429, not charged', async () => {
    const before = await balanceMicros(gw, { userId });
    gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 429 });
    await sdkError(client.chat.completions.create(CHAT), OpenAI.RateLimitError, 429);
    gw.simulator.addFault({ match: { path: '/v1/embeddings' }, status: 429 });
    assertErrorResponse(await postRaw(gw, '/v1/embeddings', { key, body: { model: 'text-embedding-3-small', input: 'hi' } }), 429);
    assert.equal(await balanceMicros(gw, { userId }), before);
  });

  test('a vendor 400 is passed through unchanged', async () => {
    // The gateway accepts stream_options without stream; the vendor refuses it.
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: { ...CHAT, stream_options: { include_usage: true } } });
    assertErrorResponse(raw, 400);
    assert.deepEqual(raw.json, {
      error: { message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.", type: 'invalid_request_error', param: 'stream_options', code: null },
    });
    const vendorBody = { error: { message: 'Vendor says no to this prompt.', type: 'invalid_request_error', param: 'messages', code: 'vendor_rule' } };
    gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 400, body: vendorBody });
    const error = await sdkError(client.chat.completions.create(CHAT), OpenAI.BadRequestError, 400);
    assert.equal(error.code, 'vendor_rule');
    assert.match(error.message, /Vendor says no to this prompt\./);
    gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, status: 400, body: vendorBody });
    const passed = await postRaw(gw, '/v1/chat/completions', { key, body: CHAT });
    assertErrorResponse(passed, 400);
    assert.deepEqual(passed.json, vendorBody);
  });

  test('none of the failed calls above charged anything', async () => {
    assert.equal(await balanceMicros(gw, { userId }), initialBalance);
    assert.deepEqual(charges(await ledger(gw, { userId })), []);
  });
});

describe('request size limit', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway({ config: { bodyLimitBytes: 64 * 1024 } });
  });
  after(async () => {
    await gw?.close();
  });

  test('an oversize body: 413 in shape A with a request id, nothing forwarded or charged', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '1.00' });
    const before = await balanceMicros(gw, { userId });
    const huge = { model: MODEL, messages: [{ role: 'user' as const, content: 'x'.repeat(100 * 1024) }] };
    const error = await sdkError(openAiClient(gw, key).chat.completions.create(huge), OpenAI.APIError, 413);
    assert.equal(error.status, 413);
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: huge });
    assertErrorResponse(raw, 413);
    assert.equal(gw.simulator.requests.length, 0);
    assert.equal(await balanceMicros(gw, { userId }), before);
    assert.equal(micros(await gw.balance({ userId })), micros('1.00'));
    assert.ok(asRecord(raw.json).error);
  });
});
