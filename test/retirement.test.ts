import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type OpenAI from 'openai';
import { countTokens, replyText } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import {
  asArray,
  asRecord,
  balanceMicros,
  catalogEntry,
  charges,
  errorA,
  expectedCost,
  ledger,
  openAiClient,
  postRaw,
  sseJsonFrames,
  tokensCostMicros,
  type JsonRecord,
} from './helpers/e2e.ts';

const START = Date.parse('2026-11-01T00:00:00Z');
const chat = (model: string, text = 'Hello from a retirement test', extra: JsonRecord = {}): JsonRecord => ({
  model,
  messages: [{ role: 'user', content: text }],
  ...extra,
});

/** Checks the redirect headers of SPEC 9.4 and returns the text inside the Warning's quotes. */
function redirectHeaders(headers: Headers, requested: string, served: string, retiredAt: string): string {
  assert.equal(headers.get('deprecation'), 'true');
  assert.equal(headers.get('sunset'), new Date(retiredAt).toUTCString(), 'Sunset is the HTTP-date of the requested model');
  assert.equal(headers.get('x-model-requested'), requested);
  assert.equal(headers.get('x-model-served'), served);
  const warning = /^299 - "(.+)"$/.exec(headers.get('warning') ?? '');
  assert.ok(warning, `Warning header is 299 with quoted text: ${headers.get('warning')}`);
  const text = warning[1]!;
  assert.ok(text.includes(requested), `Warning names the requested model: ${text}`);
  assert.ok(text.includes(served), `Warning names the serving model: ${text}`);
  assert.match(text, new RegExp(`bill\\w*[^.]*${requested.replace(/[.]/g, '\\.')}`, 'i'), `Warning names the billing model (${requested}): ${text}`);
  return text;
}

function usageCosts(value: unknown): { prompt_tokens: number; completion_tokens: number; total_cost: number; prompt_cost: number; completion_cost: number } {
  const usage = asRecord(value, 'usage');
  for (const field of ['prompt_tokens', 'completion_tokens', 'prompt_cost', 'completion_cost', 'total_cost']) assert.equal(typeof usage[field], 'number', field);
  return usage as unknown as { prompt_tokens: number; completion_tokens: number; total_cost: number; prompt_cost: number; completion_cost: number };
}

async function listedModel(gw: TestGateway, key: string, id: string): Promise<JsonRecord> {
  const response = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
  assert.equal(response.status, 200);
  const found = asArray(asRecord(await response.json()).data).map((entry) => asRecord(entry)).find((entry) => entry.id === id);
  assert.ok(found, `${id} is listed`);
  return found;
}

async function putModel(gw: TestGateway, id: string, body: JsonRecord): Promise<void> {
  const response = await gw.admin('PUT', `/models/${id}`, { kind: 'chat', provider: 'openai', ...body });
  assert.equal(response.status, 200, JSON.stringify(response.body));
}

describe('model retirement', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '20.00' }));
    client = openAiClient(gw, key);
  });
  after(async () => {
    await gw?.close();
  });

  test('an announced retirement: works as usual with only a Sunset header; after the date (no restart) it is redirected', async () => {
    const retiresAt = '2026-12-01T00:00:00Z';
    const patched = await gw.admin('PATCH', '/models/gpt-4o', { deprecated_at: retiresAt, deprecation_redirect_to: 'gpt-4.1' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    try {
      const announced = await listedModel(gw, key, 'gpt-4o');
      assert.equal(announced.deprecated, false);
      assert.equal(Date.parse(String(announced.deprecated_at)), Date.parse(retiresAt));
      assert.equal(announced.deprecation_redirect_to, 'gpt-4.1');
      const shipped = catalogEntry('gpt-4o');
      assert.deepEqual(
        { cost_context: announced.cost_context, cost_completion: announced.cost_completion },
        { cost_context: shipped.cost_context, cost_completion: shipped.cost_completion },
        'announcing a retirement leaves the prices alone',
      );

      const before = await balanceMicros(gw, { userId });
      const usual = await postRaw(gw, '/v1/chat/completions', { key, body: chat('gpt-4o') });
      assert.equal(usual.status, 200, usual.text);
      assert.equal(usual.headers.get('sunset'), new Date(retiresAt).toUTCString());
      for (const header of ['deprecation', 'warning', 'x-model-requested', 'x-model-served']) assert.equal(usual.headers.get(header), null, `no ${header} before the date`);
      const usualBody = asRecord(usual.json);
      assert.equal('warnings' in usualBody, false);
      assert.equal(usualBody.model, 'gpt-4o');
      assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'gpt-4o');
      const usualUsage = usageCosts(usualBody.usage);
      assert.equal(micros(usualUsage.total_cost), expectedCost('gpt-4o', usualUsage).total, 'billed at the catalog prices of gpt-4o');
      assert.equal(await balanceMicros(gw, { userId }), before - micros(usualUsage.total_cost));

      gw.clock.set(Date.parse('2026-12-01T00:00:01Z'));
      const retired = await listedModel(gw, key, 'gpt-4o');
      assert.equal(retired.deprecated, true);
      assert.equal(Date.parse(String(retired.deprecated_at)), Date.parse(retiresAt));

      const middle = await balanceMicros(gw, { userId });
      const redirected = await postRaw(gw, '/v1/chat/completions', { key, body: chat('gpt-4o') });
      assert.equal(redirected.status, 200, redirected.text);
      const text = redirectHeaders(redirected.headers, 'gpt-4o', 'gpt-4.1', retiresAt);
      const body = asRecord(redirected.json);
      assert.deepEqual(body.warnings, [{ code: 'DEPRECATED_MODEL', message: text }]);
      assert.equal(body.model, 'gpt-4o');
      assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'gpt-4.1', 'the analogue served');
      const usage = usageCosts(body.usage);
      assert.equal(micros(usage.total_cost), expectedCost('gpt-4o', usage).total, 'billed at the requested model');
      assert.equal(await balanceMicros(gw, { userId }), middle - micros(usage.total_cost));
    } finally {
      gw.clock.set(START);
    }
  });

  test('shipped catalog: gpt-4.5-preview is served by gpt-4.1 and billed at gpt-4.5-preview prices', async () => {
    const requested = catalogEntry('gpt-4.5-preview');
    assert.equal(requested.deprecation_redirect_to, 'gpt-4.1');
    const listed = await listedModel(gw, key, 'gpt-4.5-preview');
    assert.equal(listed.deprecated, true);
    assert.equal(listed.deprecation_redirect_to, 'gpt-4.1');

    const before = await balanceMicros(gw, { userId });
    const prompt = 'Tell me about retired models';
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4.5-preview', messages: [{ role: 'user', content: prompt }] }).withResponse();
    const text = redirectHeaders(response.headers, 'gpt-4.5-preview', 'gpt-4.1', String(requested.deprecated_at));
    assert.deepEqual(asRecord(data).warnings, [{ code: 'DEPRECATED_MODEL', message: text }]);
    assert.equal(data.model, 'gpt-4.5-preview');
    assert.equal(data.choices[0]?.message.content, replyText(prompt, 16));
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'gpt-4.1');

    const usage = usageCosts(data.usage);
    assert.equal(usage.prompt_tokens, countTokens(prompt));
    assert.equal(micros(usage.prompt_cost), tokensCostMicros(usage.prompt_tokens, requested.cost_context));
    assert.equal(micros(usage.completion_cost), tokensCostMicros(usage.completion_tokens, requested.cost_completion));
    assert.equal(micros(usage.total_cost), micros(usage.prompt_cost) + micros(usage.completion_cost));
    assert.notEqual(micros(usage.total_cost), expectedCost('gpt-4.1', usage).total, 'not the analogue prices');
    assert.equal(await balanceMicros(gw, { userId }), before - micros(usage.total_cost));
    const entry = charges(await ledger(gw, { userId })).find((row) => row.requestId === response.headers.get('x-request-id'));
    assert.ok(entry);
    assert.equal(micros(entry.amount), -micros(usage.total_cost));
    assert.equal(entry.model, 'gpt-4.5-preview');
  });

  test('streaming redirect: warnings only in the first frame, model replaced in every frame, billed at the requested prices', async () => {
    const requested = catalogEntry('gpt-4.5-preview');
    const before = await balanceMicros(gw, { userId });
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: chat('gpt-4.5-preview', 'Stream a redirect', { stream: true, stream_options: { include_usage: true } }) });
    assert.equal(raw.status, 200, raw.text);
    const text = redirectHeaders(raw.headers, 'gpt-4.5-preview', 'gpt-4.1', String(requested.deprecated_at));
    const frames = sseJsonFrames(raw.text);
    assert.ok(frames.length > 2);
    assert.deepEqual(frames[0]!.warnings, [{ code: 'DEPRECATED_MODEL', message: text }]);
    frames.slice(1).forEach((frame, index) => assert.equal('warnings' in frame, false, `frame ${index + 1} has no warnings`));
    frames.forEach((frame, index) => assert.equal(frame.model, 'gpt-4.5-preview', `frame ${index} model`));
    assert.ok(!raw.text.includes('"gpt-4.1"'), 'the analogue id never shows in a frame');
    const usage = usageCosts(frames.at(-1)!.usage);
    assert.equal(micros(usage.total_cost), expectedCost('gpt-4.5-preview', usage).total);
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'gpt-4.1');
    assert.equal(await balanceMicros(gw, { userId }), before - micros(usage.total_cost));
  });

  test('a redirect chain A→B→C (B retired too) is served by C and billed as A', async () => {
    await putModel(gw, 'chain-c', { cost_context: '0.0010', cost_completion: '0.0020' });
    await putModel(gw, 'chain-b', { cost_context: '0.0030', cost_completion: '0.0040', deprecated_at: '2026-03-01T00:00:00Z', deprecation_redirect_to: 'chain-c' });
    await putModel(gw, 'chain-a', { cost_context: '0.0500', cost_completion: '0.0700', deprecated_at: '2026-02-01T00:00:00Z', deprecation_redirect_to: 'chain-b' });
    const before = await balanceMicros(gw, { userId });
    const raw = await postRaw(gw, '/v1/chat/completions', { key, body: chat('chain-a') });
    assert.equal(raw.status, 200, raw.text);
    const text = redirectHeaders(raw.headers, 'chain-a', 'chain-c', '2026-02-01T00:00:00Z');
    const body = asRecord(raw.json);
    assert.deepEqual(body.warnings, [{ code: 'DEPRECATED_MODEL', message: text }]);
    assert.equal(body.model, 'chain-a');
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).model, 'chain-c');
    const usage = usageCosts(body.usage);
    const expected = tokensCostMicros(usage.prompt_tokens, '0.0500') + tokensCostMicros(usage.completion_tokens, '0.0700');
    assert.equal(micros(usage.total_cost), expected);
    assert.equal(await balanceMicros(gw, { userId }), before - expected);
  });

  test('a redirect cycle A→B→A (both retired) answers 410 and charges nothing', async () => {
    const retired = { cost_context: '0.0010', cost_completion: '0.0020', deprecated_at: '2026-01-01T00:00:00Z' };
    await putModel(gw, 'cycle-a', retired);
    await putModel(gw, 'cycle-b', { ...retired, deprecation_redirect_to: 'cycle-a' });
    // PUT replaces the whole entry, so the loop is closed without relying on PATCH.
    await putModel(gw, 'cycle-a', { ...retired, deprecation_redirect_to: 'cycle-b' });
    const before = await balanceMicros(gw, { userId });
    const sent = gw.simulator.requests.length;
    for (const model of ['cycle-a', 'cycle-b']) {
      const raw = await postRaw(gw, '/v1/chat/completions', { key, body: chat(model) });
      assert.equal(raw.status, 410, raw.text);
      const error = errorA(raw.json);
      assert.equal(error.type, 'model_deprecated');
      assert.equal(error.code, 'model_deprecated');
      assert.equal(error.param, 'model');
    }
    assert.equal(gw.simulator.requests.length, sent, 'nothing reached the vendor');
    assert.equal(await balanceMicros(gw, { userId }), before);
  });

  test('no analogue: 410 shape A on chat completions (stream or not) and embeddings, not charged', async () => {
    await putModel(gw, 'text-embedding-ada-002', { kind: 'embedding', cost_context: '0.0001', cost_completion: '0', deprecated_at: '2026-01-04T00:00:00Z' });
    const before = await balanceMicros(gw, { userId });
    const sent = gw.simulator.requests.length;
    const attempts: Array<[path: string, body: JsonRecord]> = [
      ['/v1/chat/completions', chat('gpt-4-32k')],
      ['/v1/chat/completions', chat('gpt-4-32k', 'stream it', { stream: true })],
      ['/v1/embeddings', { model: 'text-embedding-ada-002', input: 'embed me' }],
    ];
    const requestIds: string[] = [];
    for (const [path, body] of attempts) {
      const raw = await postRaw(gw, path, { key, body });
      assert.equal(raw.status, 410, `${path}: ${raw.text}`);
      const error = errorA(raw.json);
      assert.deepEqual({ type: error.type, code: error.code, param: error.param }, { type: 'model_deprecated', code: 'model_deprecated', param: 'model' });
      assert.ok(error.message.length > 0);
      requestIds.push(raw.headers.get('x-request-id') ?? '');
    }
    const sdkFailure = await client.chat.completions.create({ model: 'gpt-4-32k', messages: [{ role: 'user', content: 'hi' }] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    assert.ok(sdkFailure instanceof Error && 'status' in sdkFailure && sdkFailure.status === 410, 'the SDK sees a 410');
    assert.equal(gw.simulator.requests.length, sent, 'nothing reached the vendor');
    assert.equal(await balanceMicros(gw, { userId }), before);
    const rows = await ledger(gw, { userId });
    assert.equal(rows.filter((row) => row.requestId !== null && requestIds.includes(row.requestId)).length, 0);
  });

  test('embeddings redirect to the analogue, billed at the requested model', async () => {
    await putModel(gw, 'text-embedding-old', {
      kind: 'embedding',
      cost_context: '0.0400',
      cost_completion: '0',
      deprecated_at: '2026-05-01T00:00:00Z',
      deprecation_redirect_to: 'text-embedding-3-small',
    });
    const before = await balanceMicros(gw, { userId });
    const input = 'an old embedding model request';
    const raw = await postRaw(gw, '/v1/embeddings', { key, body: { model: 'text-embedding-old', input } });
    assert.equal(raw.status, 200, raw.text);
    const text = redirectHeaders(raw.headers, 'text-embedding-old', 'text-embedding-3-small', '2026-05-01T00:00:00Z');
    const body = asRecord(raw.json);
    assert.deepEqual(body.warnings, [{ code: 'DEPRECATED_MODEL', message: text }]);
    assert.equal(body.model, 'text-embedding-old');
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/embeddings')?.json).model, 'text-embedding-3-small');
    const usage = asRecord(body.usage);
    assert.equal(usage.prompt_tokens, countTokens(input));
    const expected = tokensCostMicros(countTokens(input), '0.0400');
    assert.equal(micros(Number(usage.total_cost)), expected);
    assert.equal(await balanceMicros(gw, { userId }), before - expected);
  });
});
