import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Simulator } from '../simulator/server.ts';
import type { ChatRequest } from '../src/core/chat-types.ts';
import { estimateUsage } from '../src/features/inference/chat-completions.ts';
import { ask, chat, putPool } from './helpers/channels.ts';
import { ledger } from './helpers/e2e.ts';
import { postMessages } from './helpers/messages-e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';

/** Per 1,000 tokens: 0.0010 in, 0.0020 out → micro-units per token 1 in, 2 out. */
const USAGE = { prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } };

/**
 * A vendor whose answers are written by hand: pretty-printed, with fields the gateway does not know, so a test can tell
 * whether the gateway passed the vendor's own text on.
 */
function vendorAnswer(usage: unknown): string {
  const body: Record<string, unknown> = {
    id: 'chatcmpl-hand',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'gpt-4o-mini',
    system_fingerprint: 'fp_hand',
    choices: [{ index: 0, message: { role: 'assistant', content: 'The "usage": {} here is only text.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
    service_tier: 'default',
    vendor_extra: { nested: { usage: { prompt_tokens: 999_999 } } },
  };
  if (usage !== undefined) body.usage = usage;
  return JSON.stringify(body, null, 2);
}

/** What a hand-written vendor answers: JSON text, or a body with its content type (an event stream). */
type HandAnswer = string | { type: string; body: string };

/**
 * A vendor that answers every call with `answer`'s text (JSON unless it names another type) over real HTTP, and keeps the
 * path and body text of every request it received, as they arrived.
 */
async function handWrittenVendor(answer: (path: string, text: string) => HandAnswer): Promise<{ url: string; received: Array<{ path: string; text: string }>; close(): Promise<void> }> {
  const received: Array<{ path: string; text: string }> = [];
  const vendor: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ path, text });
      const answered = answer(path, text);
      const { type, body } = typeof answered === 'string' ? { type: 'application/json', body: answered } : answered;
      response.writeHead(200, { 'content-type': type }).end(body);
    });
  });
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`,
    received,
    close: async () => {
      vendor.closeAllConnections();
      await new Promise<void>((resolve) => vendor.close(() => resolve()));
    },
  };
}

const isStream = (text: string): boolean => (JSON.parse(text) as { stream?: boolean }).stream === true;

describe('non-stream chat completions: the vendor’s own answer with only its usage priced', () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof handWrittenVendor>>;
  let next = vendorAnswer(USAGE);

  before(async () => {
    vendor = await handWrittenVendor(() => next);
    gateway = await startTestGateway();
    await putPool(gateway, 'hand', [{ id: 'only', simulator: { url: vendor.url } as Simulator }], { id: 'hand-model' });
  });
  after(async () => {
    await gateway.close();
    await vendor.close();
  });

  test('the answer is the vendor’s text, its usage replaced by the usage with costs; the balance drops by total_cost', async () => {
    const { key, userId } = await gateway.fundedKey();
    next = vendorAnswer(USAGE);
    const response = await chat(gateway, key, ask('hand-model'));
    assert.equal(response.status, 200, response.text);
    assert.match(String(response.headers.get('content-type')), /^application\/json/);
    const priced = { ...USAGE, prompt_cost: 0.001, completion_cost: 0.001, total_cost: 0.002 };
    // The top-level usage is the last key of the pretty-printed object (`"usage": {…}\n}`); the costs are written in
    // before its closing brace, the vendor's own bytes kept.
    const close = next.lastIndexOf('}', next.lastIndexOf('}') - 1);
    const expected = `${next.slice(0, close)},"prompt_cost":0.001,"completion_cost":0.001,"total_cost":0.002}\n}`;
    assert.equal(response.text, expected, 'every other byte as the vendor wrote it');
    assert.deepEqual((JSON.parse(response.text) as { usage: unknown }).usage, priced);
    assert.equal(response.headers.get('x-tollgate-cost'), '0.002');
    const entries = await ledger(gateway, { userId });
    const charges = entries.filter((entry) => entry.kind === 'charge');
    assert.equal(charges.length, 1);
    assert.equal(micros(charges[0]!.amount), -2_000n, 'charged 1,000 × 1 µ + 500 × 2 µ, by the top-level usage only');
  });

  test('an answer without usage is charged by estimate and rendered as before', async () => {
    const { key } = await gateway.fundedKey();
    next = vendorAnswer(undefined);
    // The request went out as its bytes; the prompt is estimated from them as from the parsed request.
    const asked = ask('hand-model', 'a question of some length, в том числе по-русски, '.repeat(40), {
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }],
    });
    const response = await chat(gateway, key, asked);
    assert.equal(response.status, 200, response.text);
    const body = JSON.parse(response.text) as { usage: { prompt_tokens: number; completion_tokens: number; total_cost: number }; vendor_extra: unknown };
    assert.equal(body.usage.prompt_tokens, estimateUsage(asked as unknown as ChatRequest, '').prompt_tokens, 'the prompt estimated from messages and tools');
    assert.ok(body.usage.completion_tokens > 0, 'the answer estimated');
    assert.ok(body.usage.total_cost > 0);
    assert.deepEqual(body.vendor_extra, { nested: { usage: { prompt_tokens: 999_999 } } }, 'a nested usage is not taken for the answer’s usage');
  });

  test('an answer that is not JSON is a 502 and charges nothing', async () => {
    const { key, userId } = await gateway.fundedKey();
    next = '{"id": "broken", "usage": {"prompt_tokens": 3';
    const response = await chat(gateway, key, ask('hand-model'));
    assert.equal(response.status, 502, response.text);
    assert.equal((await ledger(gateway, { userId })).filter((entry) => entry.kind === 'charge').length, 0);
  });
});

describe('non-stream Messages: the vendor’s own answer, charged by its top-level usage', () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof handWrittenVendor>>;
  let next = '';
  /** Per 1,000 tokens 0.0010 in, 0.0020 out, as the chat model above. */
  const usage = { input_tokens: 1_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 500, service_tier: 'standard' };
  const answer = (body: Record<string, unknown>): string =>
    JSON.stringify(
      {
        id: 'msg_hand',
        type: 'message',
        role: 'assistant',
        model: 'claude-hand',
        content: [{ type: 'text', text: 'A "usage": {"input_tokens": 5} inside text counts for nothing.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        vendor_extra: { usage: { input_tokens: 999_999 } },
        ...body,
      },
      null,
      2,
    );

  before(async () => {
    vendor = await handWrittenVendor(() => next);
    gateway = await startTestGateway();
    assert.equal((await gateway.admin('PUT', '/providers/hand-anthropic', { type: 'anthropic', baseUrl: vendor.url, apiKey: 'hand-key' })).status, 200);
    const put = await gateway.admin('PUT', '/models/hand-claude', { kind: 'chat', provider: 'hand-anthropic', family: 'anthropic', cost_context: '0.0010', cost_completion: '0.0020' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });
  after(async () => {
    await gateway.close();
    await vendor.close();
  });

  const send = (key: string) => postMessages(gateway, { model: 'hand-claude', max_tokens: 64, messages: [{ role: 'user', content: 'hello' }] }, { key });

  test('every byte as the vendor wrote it; the charge follows the top-level usage only', async () => {
    const { key, userId } = await gateway.fundedKey();
    next = answer({ usage });
    const response = await send(key);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.text, next);
    const charges = (await ledger(gateway, { userId })).filter((entry) => entry.kind === 'charge');
    assert.equal(charges.length, 1);
    assert.equal(micros(charges[0]!.amount), -2_000n, 'charged 1,000 × 1 µ + 500 × 2 µ');
  });

  test('an answer that is not JSON is a 502 and charges nothing, whether its usage can be found or not', async () => {
    const { key, userId } = await gateway.fundedKey();
    for (const broken of ['{"id": "msg_cut", "usage": {"input_tokens": 3', '{"id": "msg_bad", "usage": {"input_tokens": 3, "output_tokens": tru}}']) {
      next = broken;
      const response = await send(key);
      assert.equal(response.status, 502, response.text);
      assert.equal((JSON.parse(response.text) as { type: string }).type, 'error', 'in the Messages error shape');
    }
    assert.equal((await ledger(gateway, { userId })).filter((entry) => entry.kind === 'charge').length, 0);
  });
});

describe('non-stream chat completions: the client’s own bytes go to the vendor when they need no change', () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof handWrittenVendor>>;

  before(async () => {
    const chunk = (fields: Record<string, unknown>): string => `data: ${JSON.stringify({ id: 'chatcmpl-hand', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gpt-4o-mini', ...fields })}\n\n`;
    const events =
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] }) +
      chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      chunk({ choices: [], usage: USAGE }) +
      'data: [DONE]\n\n';
    vendor = await handWrittenVendor((_path, text) => (isStream(text) ? { type: 'text/event-stream', body: events } : vendorAnswer(USAGE)));
    gateway = await startTestGateway();
    // `same-model` is known to the vendor by its own id; `hand-model` by another (gpt-4o-mini); `cheap-model` costs a tenth.
    await putPool(gateway, 'hand', [{ id: 'only', simulator: { url: vendor.url } as Simulator }], { id: 'hand-model' });
    for (const [id, cost] of [['same-model', '0.0010'], ['cheap-model', '0.0001']] as const) {
      const put = await gateway.admin('PUT', `/models/${id}`, { kind: 'chat', provider: 'hand', upstreamModel: id, cost_context: cost, cost_completion: cost });
      assert.equal(put.status, 200, JSON.stringify(put.body));
    }
  });
  after(async () => {
    await gateway.close();
    await vendor.close();
  });

  /** Sends `text` as the body, as a client wrote it; returns what the client read, the vendor's copy and the charge's model. */
  async function send(text: string): Promise<{ status: number; answer: string; upstream: string; charged: string | undefined }> {
    const { key, userId } = await gateway.fundedKey();
    const before = vendor.received.length;
    const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
    const answer = await response.text();
    const charges = (await ledger(gateway, { userId })).filter((entry) => entry.kind === 'charge');
    return { status: response.status, answer, upstream: vendor.received.slice(before).map((entry) => entry.text).join('\n'), charged: charges[0]?.model ?? undefined };
  }

  test('a body the gateway would send the same is sent byte for byte: spacing, key order, escapes and numbers as written', async () => {
    const text = '{ "messages" : [ {"role":"user","content":"caf\\u00e9 \\"quoted\\""} ],\n  "seed": 4.2e1, "temperature": 0.50, "model":"same-model" }';
    const { status, upstream, charged } = await send(text);
    assert.equal(status, 200);
    assert.equal(upstream, text);
    assert.equal(charged, 'same-model');
  });

  test('a body that names a key twice is serialised again: the vendor sees only the model that is billed', async () => {
    // JSON.parse keeps the last of two keys; a vendor may keep the first. Sending the bytes as they came would bill the
    // cheap model and have the vendor serve the dear one.
    const { status, upstream, charged } = await send('{"model":"same-model","messages":[{"role":"user","content":"x"}],"model":"cheap-model"}');
    assert.equal(status, 200);
    assert.equal(charged, 'cheap-model');
    assert.equal(upstream.match(/"model"/g)?.length, 1, upstream);
    assert.equal((JSON.parse(upstream) as { model: string }).model, 'cheap-model');
  });

  test('what the gateway removes or changes is never sent: unknown and null fields, its own field, another upstream id', async () => {
    const cases: Array<[string, Record<string, unknown>, (upstream: Record<string, unknown>) => void]> = [
      ['an unknown field', { model: 'same-model', messages: [{ role: 'user', content: 'x' }], provider: { order: ['x'] } }, (upstream) => assert.equal('provider' in upstream, false)],
      ['a null field', { model: 'same-model', messages: [{ role: 'user', content: 'x' }], seed: null }, (upstream) => assert.equal('seed' in upstream, false)],
      ['the gateway’s own field', { model: 'same-model', messages: [{ role: 'user', content: 'x' }], useWalletBalance: false }, (upstream) => assert.equal('useWalletBalance' in upstream, false)],
      ['a model the vendor knows by another id', { model: 'hand-model', messages: [{ role: 'user', content: 'x' }] }, (upstream) => assert.equal(upstream.model, 'gpt-4o-mini')],
    ];
    for (const [label, body, check] of cases) {
      const { status, upstream } = await send(JSON.stringify(body));
      assert.equal(status, 200, label);
      check(JSON.parse(upstream) as Record<string, unknown>);
    }
  });

  test('a key written twice below the top level is serialised again: the vendor reads what the gateway read', async () => {
    const text = '{"model":"same-model","messages":[{"role":"system","content":"x","role":"user"}]}';
    const { status, upstream } = await send(text);
    assert.equal(status, 200);
    assert.notEqual(upstream, text);
    assert.equal(upstream.match(/"role"/g)?.length, 1, upstream);
    assert.deepEqual((JSON.parse(upstream) as { messages: unknown }).messages, [{ role: 'user', content: 'x' }]);
  });

  test('a stream sends the client’s bytes, with the usage request put first when the body has none; the client sees usage only if it asked', async () => {
    const plain = '{ "model":"same-model", "stream":true, "messages":[{"role":"user","content":"caf\\u00e9"}] }';
    const without = await send(plain);
    assert.equal(without.status, 200, without.answer);
    assert.equal(without.upstream, `{"stream_options":{"include_usage":true},${plain.slice(1)}`);
    assert.equal(without.charged, 'same-model');
    assert.match(without.answer, /"content":"hi"/);
    assert.doesNotMatch(without.answer, /"usage"/, 'usage was not asked for');

    const asking = '{"model":"same-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}';
    const asked = await send(asking);
    assert.equal(asked.status, 200, asked.answer);
    assert.equal(asked.upstream, asking, 'sent as it came');
    assert.match(asked.answer, /"usage"/);

    // Any other stream_options is written again with include_usage set; another upstream id is written again.
    const declining = await send('{"model":"same-model","stream":true,"stream_options":{"include_usage":false},"messages":[{"role":"user","content":"x"}]}');
    assert.equal(declining.status, 200, declining.answer);
    assert.deepEqual((JSON.parse(declining.upstream) as { stream_options: unknown }).stream_options, { include_usage: true });
    assert.doesNotMatch(declining.answer, /"usage"/);
    const renamed = await send('{"model":"hand-model","stream":true,"messages":[{"role":"user","content":"x"}]}');
    assert.equal(renamed.status, 200, renamed.answer);
    assert.equal((JSON.parse(renamed.upstream) as { model: string }).model, 'gpt-4o-mini');
  });
});

describe('Messages: the client’s own bytes go to the vendor when SPEC 4.2’s rewrites change nothing', () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof handWrittenVendor>>;
  const usage = { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 };
  const message = { id: 'msg_hand', type: 'message', role: 'assistant', model: 'claude-hand', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', stop_sequence: null, usage };

  before(async () => {
    const event = (name: string, data: Record<string, unknown>): string => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const events =
      event('message_start', { message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } }) +
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }) +
      event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hi' } }) +
      event('content_block_stop', { index: 0 }) +
      event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }) +
      event('message_stop', {});
    vendor = await handWrittenVendor((path, text) =>
      path.startsWith('/v1/messages/count_tokens') ? '{"input_tokens":12}' : isStream(text) ? { type: 'text/event-stream', body: events } : JSON.stringify(message),
    );
    gateway = await startTestGateway();
    assert.equal((await gateway.admin('PUT', '/providers/hand-anthropic', { type: 'anthropic', baseUrl: vendor.url, apiKey: 'hand-key' })).status, 200);
    // `hand-claude` is known to the vendor by its own id, `hand-alias` by another.
    for (const [id, upstreamModel] of [['hand-claude', 'hand-claude'], ['hand-alias', 'claude-real']] as const) {
      const put = await gateway.admin('PUT', `/models/${id}`, { kind: 'chat', provider: 'hand-anthropic', family: 'anthropic', upstreamModel, cost_context: '0.0010', cost_completion: '0.0020' });
      assert.equal(put.status, 200, JSON.stringify(put.body));
    }
  });
  after(async () => {
    await gateway.close();
    await vendor.close();
  });

  /** Sends `text` as a client wrote it; returns what the client read and the vendor's copy. */
  async function send(text: string, path = '/v1/messages'): Promise<{ status: number; answer: string; upstream: string }> {
    const { key } = await gateway.fundedKey();
    const before = vendor.received.length;
    const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: text });
    const answer = await response.text();
    return { status: response.status, answer, upstream: vendor.received.slice(before).map((entry) => entry.text).join('\n') };
  }

  const written = (fields: string): string =>
    `{ "model" : "hand-claude", "max_tokens": 64,${fields} "messages": [ {"role":"user","content":"caf\\u00e9 \\"quoted\\""} ],\n "metadata": null, "tools": [{"name":"t","description":"d","input_schema":{"type":"object","properties":{}}}] }`;

  test('a body nothing rewrites is sent byte for byte, stream and not, and to count_tokens', async () => {
    for (const [label, text, path] of [
      ['create', written(''), '/v1/messages'],
      ['stream', written(' "stream": true,'), '/v1/messages'],
      ['count_tokens', written(''), '/v1/messages/count_tokens'],
    ] as const) {
      const { status, answer, upstream } = await send(text, path);
      assert.equal(status, 200, `${label}: ${answer}`);
      assert.equal(upstream, text, label);
    }
  });

  test('what SPEC 4.2 rewrites is never sent as written: user_id, service_tier, another upstream id, a key written twice in a tool', async () => {
    const base = { model: 'hand-claude', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] };
    const userId = await send(JSON.stringify({ ...base, metadata: { user_id: 'alice@example.com' } }));
    assert.equal(userId.status, 200, userId.answer);
    assert.doesNotMatch(userId.upstream, /alice/);
    assert.match((JSON.parse(userId.upstream) as { metadata: { user_id: string } }).metadata.user_id, /^[0-9a-f]{40}$/);
    const tier = await send(JSON.stringify({ ...base, service_tier: 'auto' }));
    assert.equal(tier.status, 200, tier.answer);
    assert.equal('service_tier' in (JSON.parse(tier.upstream) as object), false);
    const alias = await send(JSON.stringify({ ...base, model: 'hand-alias' }));
    assert.equal(alias.status, 200, alias.answer);
    assert.equal((JSON.parse(alias.upstream) as { model: string }).model, 'claude-real');
    // The gateway refuses code execution by the tool's type; JSON.parse reads the last of two, a vendor may read the first.
    const twice = await send('{"model":"hand-claude","max_tokens":64,"messages":[{"role":"user","content":"x"}],"tools":[{"type":"code_execution_20250825","name":"x","type":"custom","input_schema":{"type":"object"}}]}');
    assert.equal(twice.status, 200, twice.answer);
    assert.doesNotMatch(twice.upstream, /code_execution/);
    assert.equal((JSON.parse(twice.upstream) as { tools: Array<{ type: string }> }).tools[0]!.type, 'custom');
  });
});

describe('Responses: the client’s own bytes go to an OpenAI-format vendor when they need no change', () => {
  let gateway: TestGateway;
  let vendor: Awaited<ReturnType<typeof handWrittenVendor>>;
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  const response = (id: string): Record<string, unknown> => ({
    id,
    object: 'response',
    created_at: 1_700_000_000,
    status: 'completed',
    model: 'gpt-4o-mini',
    output: [{ type: 'message', id: 'msg_hand', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'hi', annotations: [] }] }],
    usage,
  });
  let next = 0;

  before(async () => {
    vendor = await handWrittenVendor((_path, text) => {
      const answer = response(`resp_hand${++next}`);
      if (!isStream(text)) return JSON.stringify(answer);
      const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
      return { type: 'text/event-stream', body: event('response.created', { response: { ...answer, status: 'in_progress', output: [], usage: null } }) + event('response.completed', { response: answer }) };
    });
    gateway = await startTestGateway();
    // `same-model` is known to the vendor by its own id; `hand-model` by another (gpt-4o-mini).
    await putPool(gateway, 'hand', [{ id: 'only', simulator: { url: vendor.url } as Simulator }], { id: 'hand-model' });
    const put = await gateway.admin('PUT', '/models/same-model', { kind: 'chat', provider: 'hand', upstreamModel: 'same-model', cost_context: '0.0010', cost_completion: '0.0020' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
  });
  after(async () => {
    await gateway.close();
    await vendor.close();
  });

  async function send(text: string): Promise<{ status: number; answer: string; upstream: string }> {
    const { key } = await gateway.fundedKey();
    const before = vendor.received.length;
    const answered = await fetch(`${gateway.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
    const answer = await answered.text();
    return { status: answered.status, answer, upstream: vendor.received.slice(before).map((entry) => entry.text).join('\n') };
  }

  test('a body the gateway would send the same is sent byte for byte, stream and not', async () => {
    for (const text of [
      '{ "model":"same-model", "input": [ {"role":"user","content":"caf\\u00e9"} ], "store": false, "temperature": 0.50 }',
      '{"model":"same-model","stream":true,"input":"hello","metadata":{"a":"b"}}',
    ]) {
      const { status, answer, upstream } = await send(text);
      assert.equal(status, 200, answer);
      assert.equal(upstream, text);
    }
  });

  test('the gateway’s own field, another upstream id and a key written twice are never sent as written', async () => {
    const wallet = await send('{"model":"same-model","input":"x","useWalletBalance":false}');
    assert.equal(wallet.status, 200, wallet.answer);
    assert.equal('useWalletBalance' in (JSON.parse(wallet.upstream) as object), false);
    const renamed = await send('{"model":"hand-model","input":"x"}');
    assert.equal(renamed.status, 200, renamed.answer);
    assert.equal((JSON.parse(renamed.upstream) as { model: string }).model, 'gpt-4o-mini');
    const twice = await send('{"model":"same-model","input":[{"role":"system","content":"x","role":"user"}]}');
    assert.equal(twice.status, 200, twice.answer);
    assert.equal(twice.upstream.match(/"role"/g)?.length, 1, twice.upstream);
  });
});
