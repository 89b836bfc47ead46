import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { replyText, splitIntoChunks, startSimulator, type Simulator } from './server.ts';

let simulator: Simulator;
let openai: OpenAI;
let anthropic: Anthropic;

before(async () => {
  simulator = await startSimulator();
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${simulator.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: simulator.url, maxRetries: 0 });
});
after(() => simulator.close());
beforeEach(() => {
  simulator.reset();
  simulator.options.latencyMs = 0;
  simulator.options.chunkDelayMs = 0;
});

const chat = { model: 'gpt-4o', messages: [{ role: 'user' as const, content: 'hello' }] };
const message = { model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hello' }] };
const pieces = splitIntoChunks(replyText('hello', 16), 8);

describe('injected statuses', () => {
  it('answers OpenAI requests with the vendor error for the status, `times` times', async () => {
    simulator.addFault({ status: 429, times: 2, headers: { 'retry-after': '0' } });
    for (let attempt = 0; attempt < 2; attempt += 1) {
      await assert.rejects(openai.chat.completions.create(chat), (error: unknown) => {
        assert.ok(error instanceof OpenAI.RateLimitError);
        assert.equal(error.code, 'rate_limit_exceeded');
        assert.equal(error.headers?.get('retry-after'), '0');
        return true;
      });
    }
    const ok = await openai.chat.completions.create(chat);
    assert.equal(ok.choices[0]?.finish_reason, 'stop');
    simulator.addFault({ status: 500 });
    await assert.rejects(openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.InternalServerError);
      assert.equal(error.type, 'server_error');
      return true;
    });
  });

  it('matches faults by path prefix and model, and lets a body override the error', async () => {
    simulator.addFault({ match: { path: '/v1/messages', model: 'claude-opus-4-6' }, status: 529, times: Infinity });
    simulator.addFault({ match: { path: '/v1/embeddings' }, status: 503, body: { error: { message: 'custom', type: 'server_error', param: null, code: null } } });
    await anthropic.messages.create(message);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await assert.rejects(anthropic.messages.create({ ...message, model: 'claude-opus-4-6' }), (error: unknown) => {
        assert.ok(error instanceof Anthropic.APIError);
        assert.equal(error.status, 529);
        const body = error.error as { type: string; error: { type: string }; request_id: string };
        assert.equal(body.error.type, 'overloaded_error');
        assert.match(body.request_id, /^req_/);
        assert.match(error.headers?.get('request-id') ?? '', /^req_/);
        return true;
      });
    }
    await openai.chat.completions.create(chat);
    await assert.rejects(openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }), /custom/);
  });

  it('delays the first byte by latencyMs plus the fault delay', async () => {
    simulator.options.latencyMs = 40;
    simulator.addFault({ delayMs: 80 });
    let started = performance.now();
    await openai.chat.completions.create(chat);
    assert.ok(performance.now() - started >= 115);
    started = performance.now();
    await openai.chat.completions.create(chat);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 38 && elapsed < 115, `elapsed ${elapsed}`);
  });
});

describe('stream faults', () => {
  it('cuts an OpenAI stream after N content chunks, leaving non-stream requests alone', async () => {
    simulator.addFault({ cutAfterChunks: 3 });
    await openai.chat.completions.create(chat);
    const stream = await openai.chat.completions.create({ ...chat, stream: true, stream_options: { include_usage: true } });
    let content = '';
    let sawUsage = false;
    await assert.rejects(async () => {
      for await (const chunk of stream) {
        content += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) sawUsage = true;
      }
    });
    assert.equal(content, pieces.slice(0, 3).join(''));
    assert.equal(sawUsage, false);
  });

  it('cuts an Anthropic stream after N content chunks', async () => {
    simulator.addFault({ cutAfterChunks: 2 });
    const stream = anthropic.messages.stream(message);
    let text = '';
    stream.on('text', (delta) => {
      text += delta;
    });
    await assert.rejects(stream.finalMessage());
    assert.equal(text, pieces.slice(0, 2).join(''));
  });

  it('sends an Anthropic error event after N content chunks', async () => {
    simulator.addFault({ errorEventAfterChunks: 4 });
    const response = await fetch(`${simulator.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': 'k', 'content-type': 'application/json' },
      body: JSON.stringify({ ...message, stream: true }),
    });
    assert.equal(response.status, 200);
    const raw = await response.text();
    assert.equal((raw.match(/event: content_block_delta/g) ?? []).length, 4);
    assert.ok(raw.endsWith('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'));
    assert.ok(!raw.includes('message_stop'));

    simulator.addFault({ errorEventAfterChunks: 1 });
    await assert.rejects(anthropic.messages.stream(message).finalMessage(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError);
      assert.match(String(error.message), /overloaded_error|Overloaded/);
      return true;
    });
  });

  it('sends an OpenAI in-stream error frame after N content chunks', async () => {
    simulator.addFault({ errorEventAfterChunks: 2, match: { path: '/v1/chat' } });
    const stream = await openai.chat.completions.create({ ...chat, stream: true });
    await assert.rejects(async () => {
      for await (const chunk of stream) void chunk;
    }, OpenAI.APIError);
  });

  it('spaces stream chunks by chunkDelayMs', async () => {
    simulator.options.chunkDelayMs = 15;
    const started = performance.now();
    const final = await anthropic.messages.stream(message).finalMessage();
    assert.ok(performance.now() - started >= 7 * 15 - 5);
    assert.equal(final.content[0]?.type === 'text' ? final.content[0].text : '', replyText('hello', 16));
  });
});
