import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countTokens as tokenizerCount } from 'gpt-tokenizer';
import { anthropicPromptTokens, countTokens, replyText } from '../simulator/server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import {
  asRecord,
  catalogPrices,
  chargeOf,
  chargeRows,
  messagesCostMicros,
  postMessages,
  sseEvents,
  valuesOfKey,
  type JsonRecord,
  type MessagesUsage,
  type RawResponse,
} from './helpers/messages-e2e.ts';
import { fixture, startReplayVendor, type ReplayVendor } from './helpers/replay-vendor.ts';

const MODEL = 'claude-sonnet-4-5';
const PRICES = catalogPrices(MODEL);
const REPLAY_PRICES = { input: '0.0030', output: '0.0150' };
const ephemeral = { type: 'ephemeral' } as const;

/** A prompt with a breakpoint in every place the vendor takes one: a tool, a system block, a message block, the top level. */
const cachedPrompt = (topic: string): JsonRecord => ({
  model: MODEL,
  max_tokens: 256,
  tools: [{ name: 'search_docs', description: `Searches the ${topic} manual`, input_schema: { type: 'object', properties: { q: { type: 'string' } } }, cache_control: ephemeral }],
  tool_choice: { type: 'none' },
  system: [{ type: 'text', text: `You answer questions about ${topic}. `.repeat(40), cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [{ role: 'user', content: [{ type: 'text', text: `Here is the ${topic} handbook. `.repeat(60), cache_control: ephemeral }, { type: 'text', text: 'What matters most?' }] }],
  cache_control: ephemeral,
});

/** The usage of a non-stream answer, or of a stream as a client adds it up (message_start, then the cumulative message_delta). */
function usageOf(response: RawResponse): MessagesUsage {
  assert.equal(response.status, 200, response.text);
  if (response.json !== undefined) return asRecord(asRecord(response.json).usage) as unknown as MessagesUsage;
  let usage: JsonRecord = {};
  for (const { event, data } of sseEvents(response.text)) {
    if (event === 'message_start') usage = { ...asRecord(asRecord(data.message).usage) };
    if (event === 'message_delta') usage = { ...usage, ...asRecord(data.usage) };
  }
  return usage as unknown as MessagesUsage;
}

describe('messages billing: prompt caching policy and exact charges', () => {
  let gw: TestGateway;
  let replay: ReplayVendor;

  before(async () => {
    gw = await startTestGateway();
    replay = await startReplayVendor();
    assert.equal((await gw.admin('PUT', '/providers/replay', { type: 'anthropic', baseUrl: replay.url, apiKey: 'replay-key' })).status, 200);
    const model = { kind: 'chat', provider: 'replay', family: 'anthropic', max_capacity: 200000, cost_context: REPLAY_PRICES.input, cost_completion: REPLAY_PRICES.output };
    const put = await gw.admin('PUT', '/models/replay-model', model);
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });
  after(async () => {
    await gw?.close();
    await replay?.close();
  });

  async function orgKey(): Promise<{ key: string; orgId: string; userId: string }> {
    const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'org owner', balance: '5.00' });
    const org = await gw.admin<{ id: string; promptCaching: boolean }>('POST', '/orgs', { name: 'Acme', ownerId: owner.body.id, balance: '10.00' });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    assert.equal(org.body.promptCaching, false, 'prompt caching is off by default for an organization');
    const { key } = await gw.fundedKey({ userId: owner.body.id, orgId: org.body.id });
    return { key, orgId: org.body.id, userId: owner.body.id };
  }

  /** Sends a prompt and returns its usage and the exact charge booked for it. */
  async function charged(body: JsonRecord, key: string, account: { userId?: string; orgId?: string }, stream = false): Promise<{ usage: MessagesUsage; charge: bigint }> {
    const response = await postMessages(gw, { ...body, stream }, { key });
    const usage = usageOf(response);
    const { micros } = await chargeOf(gw, account, response.headers.get('x-request-id'));
    assert.equal(micros, messagesCostMicros(PRICES, usage), `charge of ${JSON.stringify(usage)}`);
    return { usage, charge: micros };
  }

  test('org key with caching off: every cache_control is removed and the whole prompt pays the input price', async () => {
    const { key, orgId, userId } = await orgKey();
    const body = cachedPrompt('billing');
    const promptTokens = anthropicPromptTokens(body);
    for (let call = 0; call < 2; call += 1) {
      const { usage, charge } = await charged(body, key, { orgId });
      const forwarded = gw.simulator.lastRequest('/v1/messages')?.json;
      assert.deepEqual(valuesOfKey(forwarded, 'cache_control'), [], 'no cache_control reached the vendor');
      const withoutBreakpoints = JSON.parse(JSON.stringify(body, (name, value: unknown) => (name === 'cache_control' ? undefined : value))) as JsonRecord;
      assert.deepEqual(forwarded, { ...withoutBreakpoints, model: 'claude-sonnet-4-5-20250929', stream: false }, 'only the breakpoints were removed');
      assert.equal(usage.cache_creation_input_tokens ?? 0, 0);
      assert.equal(usage.cache_read_input_tokens ?? 0, 0);
      assert.equal(usage.input_tokens, promptTokens);
      assert.equal(charge, messagesCostMicros(PRICES, { input_tokens: promptTokens, output_tokens: usage.output_tokens }));
    }
    assert.deepEqual(await chargeRows(gw, { userId }), [], 'the business key charges the organization, not the owner');
  });

  test('org key with caching off: a breakpoint inside a tool_result is removed too', async () => {
    const { key, orgId } = await orgKey();
    const toolUse = { type: 'tool_use', id: 'toolu_01Nested', name: 'search_docs', input: { q: 'limits' } };
    const result = { type: 'tool_result', tool_use_id: 'toolu_01Nested', content: [{ type: 'text', text: 'Limits are listed in chapter 4. '.repeat(50), cache_control: ephemeral }] };
    const body = { ...cachedPrompt('nested'), messages: [{ role: 'user', content: 'Find the limits' }, { role: 'assistant', content: [toolUse] }, { role: 'user', content: [result] }] };
    await charged(body, key, { orgId });
    assert.deepEqual(valuesOfKey(gw.simulator.lastRequest('/v1/messages')?.json, 'cache_control'), [], 'no cache_control reached the vendor');
  });

  test('after PATCH promptCaching:true the same org key caches: a write, then a read at 0.1x', async () => {
    const { key, orgId } = await orgKey();
    const body = cachedPrompt('patching');
    await charged(body, key, { orgId });
    assert.deepEqual(valuesOfKey(gw.simulator.lastRequest('/v1/messages')?.json, 'cache_control'), []);
    const patched = await gw.admin<{ promptCaching: boolean }>('PATCH', `/orgs/${orgId}`, { promptCaching: true });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.promptCaching, true);

    const written = await charged(body, key, { orgId });
    assert.equal(valuesOfKey(gw.simulator.lastRequest('/v1/messages')?.json, 'cache_control').length, 4, 'all four breakpoints forwarded');
    assert.ok((written.usage.cache_creation_input_tokens ?? 0) > 0, JSON.stringify(written.usage));
    const read = await charged(body, key, { orgId });
    assert.ok((read.usage.cache_read_input_tokens ?? 0) > 0, JSON.stringify(read.usage));
    const plain = messagesCostMicros(PRICES, { input_tokens: anthropicPromptTokens(body), output_tokens: read.usage.output_tokens });
    assert.ok(read.charge < plain, `a cache read (${read.charge}) costs less than plain input (${plain})`);
    assert.ok(written.charge > plain, `a cache write (${written.charge}) costs more than plain input (${plain})`);
  });

  test('a personal key always caches; write and read are charged exactly, streamed equal to non-streamed', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '10.00' });
    const body = cachedPrompt('personal');
    const plain = await charged(body, key, { userId });
    assert.ok((plain.usage.cache_creation_input_tokens ?? 0) > 0, 'first call writes');
    assert.ok((plain.usage.cache_creation?.ephemeral_1h_input_tokens ?? 0) > 0, 'the 1-hour breakpoint is a 1-hour write');
    const plainRead = await charged(body, key, { userId });
    assert.equal(plainRead.usage.cache_read_input_tokens, anthropicPromptTokens(body) - plainRead.usage.input_tokens);

    gw.simulator.reset(); // the vendor forgets the prefix: the streamed pair repeats write then read
    const streamed = await charged(body, key, { userId }, true);
    const streamedRead = await charged(body, key, { userId }, true);
    assert.deepEqual(streamed.usage.cache_creation_input_tokens, plain.usage.cache_creation_input_tokens);
    assert.equal(streamed.charge, plain.charge);
    assert.equal(streamedRead.charge, plainRead.charge);
  });

  /** Replays a recorded vendor stream through the gateway and returns what the client saw and the charge. */
  async function replayed(name: string, ending: 'finish' | 'destroy'): Promise<{ events: ReturnType<typeof sseEvents>; text: string; charge: bigint }> {
    const { key, userId } = await gw.fundedKey({ balance: '10.00' });
    replay.play({ chunks: fixture(name), ending });
    const response = await postMessages(gw, { model: 'replay-model', max_tokens: 512, stream: true, messages: [{ role: 'user', content: 'Replay please' }] }, { key });
    assert.equal(response.status, 200, response.text);
    const forwarded = asRecord(JSON.parse(replay.exchanges.at(-1)?.body ?? '{}'));
    assert.equal(forwarded.model, 'replay-model');
    const events = sseEvents(response.text);
    const text = events.map(({ data }) => String(asRecord(data.delta ?? {}).text ?? '')).join('');
    return { events, text, charge: (await chargeOf(gw, { userId }, response.headers.get('x-request-id'))).micros };
  }

  test('recorded stream with cache fields in message_start and a cumulative message_delta: counted once', async () => {
    const { events, charge } = await replayed('anthropic-messages-cache-usage.chunks.txt', 'finish');
    assert.equal(events.at(-1)?.event, 'message_stop');
    // 12 input × 3 µ + 4096 read × 0.3 µ + 2000 5m-writes × 3.75 µ + 1000 1h-writes × 6 µ = 14,764.8 → 14,765 µ; 87 output × 15 µ = 1,305 µ.
    assert.equal(charge, 16_070n);
    const usage = { input_tokens: 12, output_tokens: 87, cache_creation_input_tokens: 3000, cache_read_input_tokens: 4096, cache_creation: { ephemeral_1h_input_tokens: 1000 } };
    assert.equal(charge, messagesCostMicros(REPLAY_PRICES, usage));
  });

  test('recorded error event after 200: passed on to the client, charged for what was produced', async () => {
    const { events, text, charge } = await replayed('anthropic-messages-error-after-200.chunks.txt', 'finish');
    const last = events.at(-1);
    assert.equal(last?.event, 'error');
    assert.deepEqual(last?.data, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    assert.equal(text, 'Partial answer, written before the vendor was overloaded');
    assert.equal(charge, messagesCostMicros(REPLAY_PRICES, { input_tokens: 25, output_tokens: tokenizerCount(text) }));
  });

  test('recorded stream cut off before message_delta: charged input (cache included) plus estimated output', async () => {
    const { events, text, charge } = await replayed('anthropic-messages-cut-off.chunks.txt', 'destroy');
    assert.ok(!events.some(({ event }) => event === 'message_stop' || event === 'message_delta'));
    assert.equal(text, 'This reply is cut off in the middle of a sentence');
    const inputOnly = messagesCostMicros(REPLAY_PRICES, { input_tokens: 40, cache_read_input_tokens: 512, output_tokens: 0 });
    assert.equal(charge, messagesCostMicros(REPLAY_PRICES, { input_tokens: 40, cache_read_input_tokens: 512, output_tokens: tokenizerCount(text) }));
    assert.ok(charge > inputOnly, 'the estimated output is charged too');
  });

  /** Starts a stream, reads until the first text arrives, then hangs up. Returns the request id. */
  async function hangUpAfterFirstText(body: JsonRecord, key: string): Promise<string | null> {
    const controller = new AbortController();
    const response = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ ...body, stream: true }),
      signal: controller.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let seen = '';
    while (!seen.includes('text_delta')) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended before any text');
      seen += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    return response.headers.get('x-request-id');
  }

  test('a client that disconnects mid-stream stops the upstream call and pays a positive amount, once', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '10.00' });
    const text = 'Please write a long story';
    const chunkDelayMs = 250;
    gw.simulator.options.chunkDelayMs = chunkDelayMs;
    try {
      const started = Date.now();
      const requestId = await hangUpAfterFirstText({ model: MODEL, max_tokens: 256, messages: [{ role: 'user', content: text }] }, key);
      const { micros } = await chargeOf(gw, { userId }, requestId);
      assert.ok(Date.now() - started < chunkDelayMs * 5, 'booked when the client left, not when the full stream would have ended');
      const full = messagesCostMicros(PRICES, { input_tokens: countTokens(text), output_tokens: countTokens(replyText(text, 16)) });
      assert.ok(micros > 0n && micros < full, `paid ${micros} µ for part of a ${full} µ answer`);
      await new Promise((resolve) => setTimeout(resolve, chunkDelayMs * 8));
      assert.equal((await chargeRows(gw, { userId })).length, 1, 'one ledger entry, nothing booked later');
    } finally {
      gw.simulator.options.chunkDelayMs = 0;
    }
  });

  test('a client that disconnects mid-stream: the vendor sees the gateway close the connection', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '10.00' });
    replay.play({ chunks: fixture('anthropic-messages-cache-usage.chunks.txt'), ending: 'finish', frameDelayMs: 100 });
    const requestId = await hangUpAfterFirstText({ model: 'replay-model', max_tokens: 512, messages: [{ role: 'user', content: 'Replay slowly' }] }, key);
    const exchange = replay.exchanges.at(-1);
    assert.ok(exchange);
    await Promise.race([exchange.done, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    assert.equal(exchange.closedEarly, true, 'the upstream request was aborted');
    const { micros } = await chargeOf(gw, { userId }, requestId);
    assert.ok(micros > 0n);
    assert.equal((await chargeRows(gw, { userId })).length, 1);
  });
});
