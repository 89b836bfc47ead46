import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Simulator } from '../simulator/server.ts';
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

/** A vendor that answers every call with `answer()`'s text, as JSON, over real HTTP. */
async function handWrittenVendor(answer: () => string): Promise<{ url: string; close(): Promise<void> }> {
  const vendor: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(answer()));
  });
  await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`,
    close: async () => {
      vendor.closeAllConnections();
      await new Promise<void>((resolve) => vendor.close(() => resolve()));
    },
  };
}

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
    const response = await chat(gateway, key, ask('hand-model'));
    assert.equal(response.status, 200, response.text);
    const body = JSON.parse(response.text) as { usage: { prompt_tokens: number; completion_tokens: number; total_cost: number }; vendor_extra: unknown };
    assert.ok(body.usage.prompt_tokens > 0 && body.usage.completion_tokens > 0, 'estimated counts');
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
  let vendor: { url: string; close(): Promise<void> };
  /** The request bodies the vendor received, as text. */
  const received: string[] = [];

  before(async () => {
    const server: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push(Buffer.concat(chunks).toString('utf8'));
        response.writeHead(200, { 'content-type': 'application/json' }).end(vendorAnswer(USAGE));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    vendor = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: async () => {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
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

  /** Sends `text` as the body, as a client wrote it; returns the vendor's copy and the charge's model. */
  async function send(text: string): Promise<{ status: number; upstream: string; charged: string | undefined }> {
    const { key, userId } = await gateway.fundedKey();
    const before = received.length;
    const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
    await response.text();
    const charges = (await ledger(gateway, { userId })).filter((entry) => entry.kind === 'charge');
    return { status: response.status, upstream: received.slice(before).join('\n'), charged: charges[0]?.model ?? undefined };
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
});
