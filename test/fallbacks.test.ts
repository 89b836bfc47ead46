import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { transcriptionText } from '../simulator/server.ts';
import { errorA, postRaw, readRaw, sseData, type JsonRecord, type RawResponse } from './helpers/e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { assertChargedOnce, putPool, requestRows, type RequestRow } from './helpers/channels.ts';
import { perMinuteMicros, wavOfSeconds } from './helpers/tasks.ts';

/**
 * Model fallbacks on /v1/responses (pass-through and translated, stream and not), /v1/messages (passed through, stream and
 * not), /v1/embeddings, /v1/moderations and synchronous /v1/audio/transcriptions (DESIGN §12): when
 * every channel of the asked model fails, the next fallback serves, in the mode its own model needs; the client gets its
 * answer, the request is charged once at the model that served, its log row shows `servedModel` with that model's provider
 * and channel and every attempt; a follow-up pinned by `previous_response_id` never falls back. One simulator stands in
 * for every vendor account (each provider's channel has its own key, so what each account received is counted by key);
 * the asked model's calls fail by their upstream model. Chat fallbacks: channels-storage.test.ts.
 */

/** Cost in micro-units of `tokens` at a price per 1,000 tokens given in micro-units. */
const costMicros = (tokens: number, per1kMicros: bigint): bigint => (BigInt(tokens) * per1kMicros + 500n) / 1000n;

/** The asked model's upstream model (its calls fail); each fallback has another, so the vendor's `model` shows who served. */
const PRIMARY_UPSTREAM = 'gpt-4o-mini';
const FALLBACK_UPSTREAM = 'gpt-4.1-mini';
const CLAUDE_UPSTREAM = 'claude-sonnet-4-5';

interface Usage {
  input_tokens: number;
  output_tokens: number;
  input_tokens_details?: { cached_tokens: number };
}

/** What a Responses usage costs at the fallback's prices (10 and 30 micro-units a token; nothing cached here). */
function fallbackCost(usage: Usage): bigint {
  assert.equal(usage.input_tokens_details?.cached_tokens ?? 0, 0);
  return costMicros(usage.input_tokens, 10_000n) + costMicros(usage.output_tokens, 30_000n);
}

describe('fallbacks on /v1/responses, /v1/messages, /v1/embeddings, /v1/moderations and /v1/audio/transcriptions', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;
  let pools = 0;

  /** Calls the simulator received from one provider's channel (its key: a bearer token, or Anthropic's x-api-key), on a path. */
  const callsOf = (provider: string, channel: string, path: string): number =>
    gw.simulator.requests.filter(
      (request) => request.path === path && (request.headers.authorization === `Bearer sk-${provider}-${channel}` || request.headers['x-api-key'] === `sk-${provider}-${channel}`),
    ).length;

  /**
   * A fresh asked model on a two-channel provider with a pass-through fallback on another provider (and, when asked, a
   * Claude fallback first on an Anthropic-format one). Fresh per test: every channel starts healthy.
   */
  async function pool(options: { claude?: boolean; kind?: 'chat' | 'embedding' | 'moderation' | 'transcription' } = {}): Promise<{ main: string; spare: string; claudeProvider: string; asked: string; fallback: string; claude: string }> {
    const n = ++pools;
    const names = { main: `main${n}`, spare: `spare${n}`, claudeProvider: `claude${n}`, asked: `asked-${n}`, fallback: `fallback-${n}`, claude: `claude-fallback-${n}` };
    const kind = options.kind ?? 'chat';
    await putPool(gw, names.spare, [{ id: 'c', simulator: gw.simulator }], { id: names.fallback, cost_context: '0.0100', cost_completion: '0.0300' });
    await retype(names.fallback, { kind, upstreamModel: FALLBACK_UPSTREAM });
    const fallbacks = [names.fallback];
    if (options.claude) {
      const put = await gw.admin('PUT', `/providers/${names.claudeProvider}`, { type: 'anthropic', channels: [{ id: 'k', baseUrl: gw.simulator.url, apiKey: `sk-${names.claudeProvider}-k` }] });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const model = await gw.admin('PUT', `/models/${names.claude}`, { kind: 'chat', provider: names.claudeProvider, upstreamModel: CLAUDE_UPSTREAM, cost_context: '0.0200', cost_completion: '0.0400' });
      assert.equal(model.status, 200, JSON.stringify(model.body));
      fallbacks.unshift(names.claude);
    }
    await putPool(gw, names.main, [{ id: 'a', simulator: gw.simulator }, { id: 'b', simulator: gw.simulator }], { id: names.asked, cost_context: '0.0010', cost_completion: '0.0020' });
    await retype(names.asked, { kind, fallbacks });
    return names;
  }

  async function retype(model: string, fields: JsonRecord): Promise<void> {
    const patched = await gw.admin('PATCH', `/models/${model}`, fields);
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
  }

  /** The asked model's channels answer 503 to the next `times` calls on `path`. */
  const failPrimary = (path: string, times: number): void => gw.simulator.addFault({ status: 503, times, match: { path, model: PRIMARY_UPSTREAM } });

  const respond = (body: JsonRecord): Promise<RawResponse> => postRaw(gw, '/v1/responses', { key, body });

  /** This test's log rows (oldest first) as [model, servedModel, provider, channel, attempts, status, stream]. */
  async function rowsOf(asked: string): Promise<RequestRow[]> {
    return (await requestRows(gw, userId)).filter((row) => row.model === asked).reverse();
  }
  const shown = (rows: readonly RequestRow[]): unknown[][] => rows.map((row) => [row.model, row.servedModel, row.provider, row.channel, row.attempts, row.status, row.stream]);

  /** The gateway's record of a response id: who serves its follow-ups. */
  const storedResponse = (id: string) => gw.storage.db.selectFrom('responses').select(['model', 'provider', 'channel', 'translated']).where('id', '=', id).executeTakeFirstOrThrow();

  before(async () => {
    gw = await startTestGateway({});
    ({ key, userId } = await gw.fundedKey({ balance: '100.00' }));
  });
  after(async () => {
    await gw?.close();
  });
  beforeEach(() => {
    gw.simulator.reset();
  });

  test('responses, passed through: every channel of the model failing, its fallback serves; billed at it, logged with servedModel; recorded at its channel, so GET and a follow-up go there', async () => {
    const { main, spare, asked, fallback } = await pool();
    failPrimary('/v1/responses', 2);
    const served = await respond({ model: asked, input: 'fall back please' });
    assert.equal(served.status, 200, served.text);
    const body = served.json as { id: string; model: string; output: unknown[]; usage: Usage };
    assert.equal(body.model, FALLBACK_UPSTREAM, "the vendor's answer as it came, from the model that served (as chat completions)");
    assert.ok(body.output.length > 0);
    assert.deepEqual([callsOf(main, 'a', '/v1/responses'), callsOf(main, 'b', '/v1/responses'), callsOf(spare, 'c', '/v1/responses')], [1, 1, 1]);
    const expected = fallbackCost(body.usage);
    assert.equal(micros(served.headers.get('x-tollgate-cost') ?? 'missing'), expected, 'billed at the fallback');
    assert.deepEqual({ ...(await storedResponse(body.id)) }, { model: fallback, provider: spare, channel: 'c', translated: 0 });

    const fetched = await fetch(`${gw.url}/v1/responses/${body.id}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(fetched.status, 200);
    assert.equal(((await fetched.json()) as { id: string }).id, body.id);
    assert.equal(gw.simulator.lastRequest('/v1/responses/')?.headers.authorization, `Bearer sk-${spare}-c`, 'GET asks the account that made it');

    // The asked model's channels work again; a follow-up naming it still goes to the fallback that holds the conversation.
    const followUp = await respond({ model: asked, input: 'and then?', previous_response_id: body.id });
    assert.equal(followUp.status, 200, followUp.text);
    assert.equal(gw.simulator.lastRequest('/v1/responses')?.headers.authorization, `Bearer sk-${spare}-c`);
    assert.equal((gw.simulator.lastRequest('/v1/responses')?.json as JsonRecord).previous_response_id, body.id);
    assert.equal(callsOf(main, 'a', '/v1/responses') + callsOf(main, 'b', '/v1/responses'), 2, 'the asked model was not called for the follow-up');

    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [
      [asked, fallback, spare, 'c', 3, 200, false],
      [asked, fallback, spare, 'c', 1, 200, false],
    ]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.get(rows[0]!.id), expected);
    assert.equal(charges.get(rows[1]!.id), fallbackCost((followUp.json as { usage: Usage }).usage));
    const ledgerModels = await gw.storage.db.selectFrom('ledger').select('model').where('request_id', 'in', rows.map((row) => row.id)).execute();
    assert.deepEqual(ledgerModels.map((row) => row.model), [fallback, fallback]);
  });

  test('responses, passed through, streamed: the fallback serves before the first byte; its events relayed; charged once from its usage', async () => {
    const { main, spare, asked, fallback } = await pool();
    failPrimary('/v1/responses', 2);
    const streamed = await respond({ model: asked, input: 'stream a fallback', stream: true });
    assert.equal(streamed.status, 200, streamed.text);
    const events = sseData(streamed.text).map((data) => JSON.parse(data) as { type: string; response?: { id: string; model: string; usage: Usage } });
    assert.equal(events[0]?.type, 'response.created');
    const completed = events.at(-1);
    assert.equal(completed?.type, 'response.completed');
    assert.equal(completed?.response?.model, FALLBACK_UPSTREAM);
    assert.deepEqual([callsOf(main, 'a', '/v1/responses') + callsOf(main, 'b', '/v1/responses'), callsOf(spare, 'c', '/v1/responses')], [2, 1]);
    assert.deepEqual({ ...(await storedResponse(completed!.response!.id)) }, { model: fallback, provider: spare, channel: 'c', translated: 0 });

    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [[asked, fallback, spare, 'c', 3, 200, true]]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.get(rows[0]!.id), fallbackCost(completed!.response!.usage));
  });

  test('responses: a follow-up pinned by previous_response_id never falls back: its channel failing is a 502, the fallback not called, nothing charged', async () => {
    const { main, spare, asked } = await pool();
    const first = await respond({ model: asked, input: 'remember me' });
    assert.equal(first.status, 200, first.text);
    const id = (first.json as { id: string }).id;
    const { channel } = await storedResponse(id);
    assert.ok(channel === 'a' || channel === 'b');

    const before = await gw.balance({ userId });
    for (const stream of [false, true]) {
      failPrimary('/v1/responses', 1);
      const pinned = await respond({ model: asked, input: 'and now?', previous_response_id: id, stream });
      assert.equal(pinned.status, 502, pinned.text);
      assert.equal(errorA(pinned.json).type, 'upstream_error');
    }
    assert.equal(callsOf(spare, 'c', '/v1/responses'), 0, 'no fallback was tried');
    assert.equal(callsOf(main, channel!, '/v1/responses'), 1 + 2, 'only the pinned channel, once a call');
    assert.equal(await gw.balance({ userId }), before, 'not charged');
    const rows = await rowsOf(asked);
    // (`stream` in the log means an event stream began; neither did.)
    assert.deepEqual(shown(rows).slice(1), [
      [asked, asked, main, channel, 1, 502, false],
      [asked, asked, main, channel, 1, 502, false],
    ]);
    await assertChargedOnce(gw, userId, rows);
  });

  test('responses: a passed-through model falls back to a Claude model, translated (stream and not); a follow-up continues there; a request Claude cannot take skips it', async () => {
    const { main, spare, claudeProvider, asked, fallback, claude } = await pool({ claude: true });
    const claudeCost = (usage: Usage): bigint => costMicros(usage.input_tokens, 20_000n) + costMicros(usage.output_tokens, 40_000n);
    failPrimary('/v1/responses', 2);
    const served = await respond({ model: asked, instructions: 'Be brief.', input: 'translate me' });
    assert.equal(served.status, 200, served.text);
    const body = served.json as { id: string; model: string; output_text?: string; output: Array<{ type: string }>; usage: Usage };
    assert.equal(body.model, claude, 'a translated Response names the gateway model that answered');
    assert.match(body.id, /^resp_/);
    assert.equal(callsOf(claudeProvider, 'k', '/v1/messages'), 1);
    assert.equal((gw.simulator.lastRequest('/v1/messages')?.json as JsonRecord).model, CLAUDE_UPSTREAM);
    assert.deepEqual({ ...(await storedResponse(body.id)) }, { model: claude, provider: claudeProvider, channel: 'k', translated: 1 });

    const followUp = await respond({ model: asked, input: 'go on', previous_response_id: body.id });
    assert.equal(followUp.status, 200, followUp.text);
    const messages = (gw.simulator.lastRequest('/v1/messages')?.json as { messages: unknown[] }).messages;
    assert.equal(messages.length, 3, 'the stored turn, then the new input');
    assert.equal(callsOf(claudeProvider, 'k', '/v1/messages'), 2);

    failPrimary('/v1/responses', 2);
    const streamed = await respond({ model: asked, input: 'translate a stream', stream: true, tools: [{ type: 'web_search' }] });
    assert.equal(streamed.status, 200, streamed.text);
    assert.equal(streamed.headers.get('x-tollgate-skipped-tools'), 'web_search', 'the hosted tool Claude cannot run is named, as for a Claude model asked for');
    assert.deepEqual((gw.simulator.lastRequest('/v1/messages')?.json as JsonRecord).tools, undefined);
    const completed = sseData(streamed.text).map((data) => JSON.parse(data) as { type: string; response?: { model: string; usage: Usage } }).at(-1);
    assert.equal(completed?.type, 'response.completed');
    assert.equal(completed?.response?.model, claude);

    // An item only the vendor keeps (item_reference without previous_response_id) cannot be translated: the Claude fallback
    // is skipped, and the pass-through fallback after it serves.
    failPrimary('/v1/responses', 2);
    const skipped = await respond({ model: asked, input: [{ type: 'item_reference', id: 'msg_at_the_vendor' }, { role: 'user', content: 'hi' }] });
    assert.equal(skipped.status, 200, skipped.text);
    assert.equal((skipped.json as { model: string }).model, FALLBACK_UPSTREAM);
    assert.equal(callsOf(claudeProvider, 'k', '/v1/messages'), 3, 'the Claude fallback was not called for it');

    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [
      [asked, claude, claudeProvider, 'k', 3, 200, false],
      [asked, claude, claudeProvider, 'k', 1, 200, false],
      [asked, claude, claudeProvider, 'k', 3, 200, true],
      [asked, fallback, spare, 'c', 3, 200, false],
    ]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.get(rows[0]!.id), claudeCost(body.usage));
    assert.equal(charges.get(rows[1]!.id), claudeCost((followUp.json as { usage: Usage }).usage));
    assert.equal(charges.get(rows[2]!.id), claudeCost(completed!.response!.usage));
    assert.equal(charges.get(rows[3]!.id), fallbackCost((skipped.json as { usage: Usage }).usage));
    assert.equal(callsOf(main, 'a', '/v1/responses') + callsOf(main, 'b', '/v1/responses'), 6);
  });

  test('responses: a Claude model (translated) falls back to an OpenAI model, passed through', async () => {
    const { spare, claudeProvider, claude, fallback } = await pool({ claude: true });
    // The Claude model is the one asked for here, with the pass-through model as its fallback.
    await retype(claude, { fallbacks: [fallback] });
    gw.simulator.addFault({ status: 529, times: 1, match: { path: '/v1/messages', model: CLAUDE_UPSTREAM } });
    const served = await respond({ model: claude, input: 'from Claude to GPT' });
    assert.equal(served.status, 200, served.text);
    const body = served.json as { id: string; model: string; usage: Usage };
    assert.equal(body.model, FALLBACK_UPSTREAM);
    assert.deepEqual([callsOf(claudeProvider, 'k', '/v1/messages'), callsOf(spare, 'c', '/v1/responses')], [1, 1]);
    assert.equal((gw.simulator.lastRequest('/v1/responses')?.json as JsonRecord).input, 'from Claude to GPT', 'the request passed through as sent');
    assert.deepEqual({ ...(await storedResponse(body.id)) }, { model: fallback, provider: spare, channel: 'c', translated: 0 });
    const rows = await rowsOf(claude);
    assert.deepEqual(shown(rows), [[claude, fallback, spare, 'c', 2, 200, false]]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.get(rows[0]!.id), fallbackCost(body.usage));
  });

  test("messages, passed through: every channel of the model failing, its Claude fallback gets the client's request under its own upstream id, stream and not; charged once at it", async () => {
    const n = ++pools;
    const [askedProvider, spareProvider, asked, fallback] = [`cmain${n}`, `cspare${n}`, `claude-asked-${n}`, `claude-spare-${n}`];
    for (const [provider, channels] of [[askedProvider, ['a', 'b']], [spareProvider, ['c']]] as const) {
      const put = await gw.admin('PUT', `/providers/${provider}`, { type: 'anthropic', channels: channels.map((id) => ({ id, baseUrl: gw.simulator.url, apiKey: `sk-${provider}-${id}` })) });
      assert.equal(put.status, 200, JSON.stringify(put.body));
    }
    const spare = await gw.admin('PUT', `/models/${fallback}`, { kind: 'chat', provider: spareProvider, upstreamModel: CLAUDE_UPSTREAM, cost_context: '0.0100', cost_completion: '0.0300' });
    assert.equal(spare.status, 200, JSON.stringify(spare.body));
    // The asked model's vendor knows it by its own id, so the client's bytes are what the gateway sends it.
    const main = await gw.admin('PUT', `/models/${asked}`, { kind: 'chat', provider: askedProvider, upstreamModel: asked, cost_context: '0.0010', cost_completion: '0.0020', fallbacks: [fallback] });
    assert.equal(main.status, 200, JSON.stringify(main.body));
    const content = 'a long question, с русским текстом, to be asked again elsewhere. '.repeat(60);
    for (const stream of [false, true]) {
      gw.simulator.reset();
      gw.simulator.addFault({ status: 503, times: 2, match: { path: '/v1/messages', model: asked } });
      const sent = { model: asked, max_tokens: 40, ...(stream ? { stream } : {}), system: 'Be brief.', messages: [{ role: 'user', content }] };
      const answer = await postRaw(gw, '/v1/messages', { key, body: sent });
      assert.equal(answer.status, 200, answer.text.slice(0, 300));
      assert.deepEqual([callsOf(askedProvider, 'a', '/v1/messages'), callsOf(askedProvider, 'b', '/v1/messages'), callsOf(spareProvider, 'c', '/v1/messages')], [1, 1, 1], `stream ${stream}: both channels, then the fallback`);
      const received = gw.simulator.requests.filter((request) => request.path === '/v1/messages').map((request) => request.json);
      assert.deepEqual(received[0], sent, `stream ${stream}: the asked model's vendor got the client's request`);
      assert.deepEqual(received[2], { ...sent, model: CLAUDE_UPSTREAM }, `stream ${stream}: the fallback's vendor got it under the fallback's upstream id`);
      if (stream) assert.match(answer.text, /event: message_stop/);
    }
    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [
      [asked, fallback, spareProvider, 'c', 3, 200, false],
      [asked, fallback, spareProvider, 'c', 3, 200, true],
    ]);
    await assertChargedOnce(gw, userId, rows);
  });

  test('responses: every model failing is the endpoint error (502, 429 when all are rate-limited), in shape A, stream and not; nothing charged', async () => {
    const { asked, fallback } = await pool();
    const before = await gw.balance({ userId });
    for (const stream of [false, true]) {
      gw.simulator.addFault({ status: 500, times: 3, match: { path: '/v1/responses' } });
      const failed = await respond({ model: asked, input: 'nothing works', stream });
      assert.equal(failed.status, 502, failed.text);
      assert.equal(errorA(failed.json).type, 'upstream_error');
    }
    const limited = await pool();
    gw.simulator.addFault({ status: 429, headers: { 'retry-after': '30' }, times: 3, match: { path: '/v1/responses' } });
    const rateLimited = await respond({ model: limited.asked, input: 'too many' });
    assert.equal(rateLimited.status, 429, rateLimited.text);
    assert.equal(errorA(rateLimited.json).type, 'rate_limit_error');
    assert.equal(await gw.balance({ userId }), before);
    const rows = [...(await rowsOf(asked)), ...(await rowsOf(limited.asked))];
    assert.deepEqual(rows.map((row) => [row.servedModel, row.attempts, row.status, micros(row.cost)]), [
      [fallback, 3, 502, 0n],
      [fallback, 3, 502, 0n],
      [limited.fallback, 3, 429, 0n],
    ]);
    await assertChargedOnce(gw, userId, rows);
  });

  test('embeddings: every channel of the model failing, its fallback embeds the same input; billed at it, logged with servedModel; charged once', async () => {
    const { main, spare, asked, fallback } = await pool({ kind: 'embedding' });
    failPrimary('/v1/embeddings', 2);
    const input = ['gardens and tea', 'a second text'];
    const served = await postRaw(gw, '/v1/embeddings', { key, body: { model: asked, input } });
    assert.equal(served.status, 200, served.text);
    const body = served.json as { data: Array<{ embedding: number[] }>; usage: { prompt_tokens: number; total_cost: number } };
    assert.equal(body.data.length, 2, 'an embedding for each input');
    assert.deepEqual([callsOf(main, 'a', '/v1/embeddings'), callsOf(main, 'b', '/v1/embeddings'), callsOf(spare, 'c', '/v1/embeddings')], [1, 1, 1]);
    assert.deepEqual(gw.simulator.lastRequest('/v1/embeddings')?.json, { model: FALLBACK_UPSTREAM, input }, "the fallback's vendor got the same input");
    const expected = costMicros(body.usage.prompt_tokens, 10_000n);
    assert.equal(micros(body.usage.total_cost), expected, 'billed at the fallback');
    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [[asked, fallback, spare, 'c', 3, 200, false]]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.get(rows[0]!.id), expected);
  });

  test("moderations: the moderation model's channels failing, its fallback serves; the answer names it; billed at it, logged; every model failing is a 502, free", async () => {
    const { main, spare, fallback } = await pool({ kind: 'moderation' });
    // The endpoint has one model: it is pointed at the failing provider, with the fallback.
    const original = await gw.admin<JsonRecord>('GET', '/models/text-moderation-latest');
    assert.equal(original.status, 200);
    await retype('text-moderation-latest', { provider: main, upstreamModel: PRIMARY_UPSTREAM, fallbacks: [fallback] });
    try {
      failPrimary('/v1/moderations', 2);
      const input = 'A calm sentence about gardens and tea.';
      const served = await postRaw(gw, '/v1/moderations', { key, body: { input } });
      assert.equal(served.status, 200, served.text);
      const body = served.json as { model: string; results: Array<{ flagged: boolean }>; usage: { prompt_tokens: number; total_cost: number } };
      assert.equal(body.model, fallback, 'the model that answered');
      assert.equal(body.results[0]?.flagged, false);
      assert.deepEqual([callsOf(main, 'a', '/v1/moderations'), callsOf(main, 'b', '/v1/moderations'), callsOf(spare, 'c', '/v1/moderations')], [1, 1, 1]);
      assert.equal((gw.simulator.lastRequest('/v1/moderations')?.json as JsonRecord).model, FALLBACK_UPSTREAM);
      const expected = costMicros(body.usage.prompt_tokens, 10_000n);
      assert.equal(micros(body.usage.total_cost), expected, 'billed at the fallback');

      const before = await gw.balance({ userId });
      gw.simulator.addFault({ status: 500, times: 3, match: { path: '/v1/moderations' } });
      const failed = await postRaw(gw, '/v1/moderations', { key, body: { input } });
      assert.equal(failed.status, 502, failed.text);
      assert.equal(errorA(failed.json).type, 'upstream_error');
      assert.equal(await gw.balance({ userId }), before, 'not charged');

      const rows = (await requestRows(gw, userId)).filter((row) => row.model === 'text-moderation-latest').reverse();
      assert.deepEqual(shown(rows), [
        ['text-moderation-latest', fallback, spare, 'c', 3, 200, false],
        ['text-moderation-latest', fallback, spare, 'c', 3, 502, false],
      ]);
      const charges = await assertChargedOnce(gw, userId, rows);
      assert.equal(charges.get(rows[0]!.id), expected);
    } finally {
      const { provider, upstreamModel, fallbacks } = original.body as { provider: string; upstreamModel: string; fallbacks?: string[] };
      await retype('text-moderation-latest', { provider, upstreamModel, fallbacks: fallbacks ?? [] });
    }
  });
  /** 45 s of audio: the WAV header and the vendor (simulator) agree on it. */
  const AUDIO_SECONDS = 45;
  const AUDIO = wavOfSeconds(AUDIO_SECONDS);

  /** A synchronous transcription (multipart, as the official SDKs send it). */
  async function transcribe(fields: Record<string, string>): Promise<RawResponse> {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(AUDIO)], { type: 'audio/wav' }), 'speech.wav');
    for (const [name, value] of Object.entries(fields)) form.set(name, value);
    return readRaw(await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form }));
  }

  /**
   * A transcription model asked for on a failing two-channel provider, priced per minute, with `whisper-1` upstream as its
   * fallback; with `anthropicFirst`, a transcription model on an Anthropic-format provider (no media client) comes first.
   */
  async function transcriptionPool(options: { anthropicFirst?: boolean } = {}): Promise<Awaited<ReturnType<typeof pool>>> {
    const names = await pool({ kind: 'transcription' });
    // whisper-1 at the vendor reports the audio's duration: the charge is the fallback's price for those seconds.
    await retype(names.fallback, { cost_minute: '0.0060', upstreamModel: 'whisper-1' });
    const fallbacks = [names.fallback];
    if (options.anthropicFirst) {
      const put = await gw.admin('PUT', `/providers/${names.claudeProvider}`, { type: 'anthropic', channels: [{ id: 'k', baseUrl: gw.simulator.url, apiKey: `sk-${names.claudeProvider}-k` }] });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const model = await gw.admin('PUT', `/models/${names.claude}`, { kind: 'transcription', provider: names.claudeProvider, upstreamModel: CLAUDE_UPSTREAM, cost_minute: '0.0200' });
      assert.equal(model.status, 200, JSON.stringify(model.body));
      fallbacks.unshift(names.claude);
    }
    await retype(names.asked, { cost_minute: '0.0100', fallbacks });
    return names;
  }

  test("transcriptions: every channel of the model failing, its fallback transcribes the same audio; billed per minute at its price, once; logged with servedModel", async () => {
    // First in line, a transcription model on an Anthropic-format provider: it has no media client, so it is skipped.
    const { main, spare, asked, fallback } = await transcriptionPool({ anthropicFirst: true });
    failPrimary('/v1/audio/transcriptions', 2);
    const served = await transcribe({ model: asked });
    assert.equal(served.status, 200, served.text);
    const body = served.json as { text: string; usage: { type: string; seconds: number; total_cost: number } };
    assert.equal(body.text, transcriptionText(AUDIO.length), 'the whole file was sent again to the fallback');
    assert.deepEqual([body.usage.type, body.usage.seconds], ['duration', AUDIO_SECONDS]);
    assert.deepEqual([callsOf(main, 'a', '/v1/audio/transcriptions'), callsOf(main, 'b', '/v1/audio/transcriptions'), callsOf(spare, 'c', '/v1/audio/transcriptions')], [1, 1, 1]);
    assert.match(gw.simulator.lastRequest('/v1/audio/transcriptions')?.body ?? '', /name="model"\r\n\r\nwhisper-1\r\n/);
    const expected = perMinuteMicros('0.0060', AUDIO_SECONDS);
    assert.equal(micros(body.usage.total_cost), expected, 'billed at the fallback');
    assert.equal(micros(served.headers.get('x-tollgate-cost') ?? 'missing'), expected);

    // A plain-text answer is priced on the file's own length, at the model that served.
    failPrimary('/v1/audio/transcriptions', 2);
    const text = await transcribe({ model: asked, response_format: 'text' });
    assert.equal(text.status, 200, text.text);
    assert.equal(text.text, `${transcriptionText(AUDIO.length)}\n`);
    assert.equal(micros(text.headers.get('x-tollgate-cost') ?? 'missing'), expected);

    const rows = await rowsOf(asked);
    assert.deepEqual(shown(rows), [
      [asked, fallback, spare, 'c', 3, 200, false],
      [asked, fallback, spare, 'c', 3, 200, false],
    ]);
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.deepEqual(rows.map((row) => charges.get(row.id)), [expected, expected]);
    const ledgerModels = await gw.storage.db.selectFrom('ledger').select('model').where('request_id', 'in', rows.map((row) => row.id)).execute();
    assert.deepEqual(ledgerModels.map((row) => row.model), [fallback, fallback]);
  });

  test('transcriptions: every model failing is the endpoint error (502, 429 when all are rate-limited), in shape A; nothing charged', async () => {
    const { asked, fallback } = await transcriptionPool();
    const before = await gw.balance({ userId });
    gw.simulator.addFault({ status: 500, times: 3, match: { path: '/v1/audio/transcriptions' } });
    const failed = await transcribe({ model: asked });
    assert.equal(failed.status, 502, failed.text);
    assert.equal(errorA(failed.json).type, 'upstream_error');

    const limited = await transcriptionPool();
    gw.simulator.addFault({ status: 429, headers: { 'retry-after': '30' }, times: 3, match: { path: '/v1/audio/transcriptions' } });
    const rateLimited = await transcribe({ model: limited.asked });
    assert.equal(rateLimited.status, 429, rateLimited.text);
    assert.equal(errorA(rateLimited.json).type, 'rate_limit_error');
    assert.equal(await gw.balance({ userId }), before, 'not charged');

    const rows = [...(await rowsOf(asked)), ...(await rowsOf(limited.asked))];
    assert.deepEqual(rows.map((row) => [row.servedModel, row.attempts, row.status, micros(row.cost)]), [
      [fallback, 3, 502, 0n],
      [limited.fallback, 3, 429, 0n],
    ]);
    await assertChargedOnce(gw, userId, rows);
  });
});
