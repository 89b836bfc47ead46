import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatChunk, ChatRequest, ChatStreamEvent, ChatUsage } from '../../core/chat-types.ts';
import { scanChatChunk } from '../../dialects/openai/chat-chunk-scan.ts';
import { completeModel, modelSchema } from '../catalog/model.ts';
import type { Resolution } from '../catalog/retirement.ts';
import { ChatCompletionsRelay } from './chat-completions-relay.ts';
import type { ModelCall } from './model-call.ts';

const model = (id: string) => completeModel(modelSchema.parse({ id, kind: 'chat', provider: 'openai', cost_context: '0.0010', cost_completion: '0.0020' }), 'openai', 0);

function call(redirected: boolean): ModelCall {
  const served = model('gpt-new');
  const resolution: Resolution = {
    requested: redirected ? model('gpt-old') : served,
    served,
    billed: served,
    headers: {},
    warning: redirected ? { code: 'DEPRECATED_MODEL', message: 'gpt-old is retired; served by gpt-new' } : null,
  };
  return { resolution } as ModelCall;
}

const frame = (delta: Record<string, unknown>, extra: Record<string, unknown> = { usage: null }): string =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-new', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

const STREAM = [
  frame({ role: 'assistant', content: '' }),
  frame({ content: 'He said "hi"' }),
  frame({ content: ' \\ then\nnewline, café 😀' }),
  frame({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }] }),
  frame({ content: 'error' }),
  frame({}, { usage: null, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
];
const USAGE = frame({}, { choices: [], usage: { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 } });

/** The events as the OpenAI reader yields them (scanned where it can), or all parsed as before the scan existed. */
const events = (frames: readonly string[], scan: boolean): ChatStreamEvent[] =>
  frames.map((raw) => (scan ? scanChatChunk(raw) : undefined) ?? { kind: 'chunk', chunk: JSON.parse(raw) as ChatChunk, raw });

function relay(frames: readonly string[], scan: boolean, options: { redirected: boolean; includeUsage: boolean }) {
  const booked: Array<{ usage: ChatUsage | undefined; produced: string }> = [];
  const request = { model: 'gpt-old', messages: [], stream: true, ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}) } as ChatRequest;
  const dialect = new ChatCompletionsRelay(call(options.redirected), request, (usage, produced) => booked.push({ usage, produced }));
  const sent = events(frames, scan).map((event) => dialect.frame(event));
  dialect.charge();
  return { sent, booked };
}

describe('ChatCompletionsRelay: scanned frames relay exactly as parsed ones', () => {
  for (const redirected of [false, true]) {
    for (const includeUsage of [false, true]) {
      for (const cut of [false, true]) {
        const name = `${redirected ? 'redirected' : 'served as asked'}, usage ${includeUsage ? 'asked for' : 'not asked for'}, ${cut ? 'cut before usage' : 'finished'}`;
        test(name, () => {
          const frames = cut ? STREAM : [...STREAM, USAGE];
          const scanned = relay(frames, true, { redirected, includeUsage });
          const parsed = relay(frames, false, { redirected, includeUsage });
          assert.deepEqual(scanned.sent, parsed.sent, 'the same frames reach the client');
          assert.deepEqual(scanned.booked, parsed.booked, 'the same charge is booked');
          assert.equal(scanned.booked.length, 1);
        });
      }
    }
  }

  test('a vendor that puts the usage on its last content frame, and one with the usage frame pretty-printed: scanned as parsed', () => {
    const lastWithUsage = frame({ content: 'bye' }, { usage: { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 } });
    const pretty = JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-new', choices: [], usage: { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 } }, null, 1);
    for (const frames of [[...STREAM, lastWithUsage], [...STREAM, pretty]]) {
      for (const redirected of [false, true]) {
        for (const includeUsage of [false, true]) {
          const scanned = relay(frames, true, { redirected, includeUsage });
          const parsed = relay(frames, false, { redirected, includeUsage });
          assert.deepEqual(scanned.booked, parsed.booked, 'the same charge is booked');
          assert.deepEqual(scanned.booked[0]?.usage, { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 });
          // What a client reads: the frame's data lines joined again.
          const payloads = (sent: Array<string | undefined>) => sent.map((text) => text && (JSON.parse(text.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n')) as unknown));
          assert.deepEqual(payloads(scanned.sent), payloads(parsed.sent), 'the same frames');
        }
      }
    }
  });

  test('a frame passes through unchanged, or with only its usage: null cut', () => {
    const raw = frame({ content: 'x' });
    assert.equal(relay([raw], true, { redirected: false, includeUsage: true }).sent[0], `data: ${raw}\n\n`);
    assert.equal(relay([raw], true, { redirected: false, includeUsage: false }).sent[0], `data: ${raw.replace(',"usage":null', '')}\n\n`);
  });

  test('a stream cut before its usage books the text produced, decoded', () => {
    const { booked } = relay(STREAM, true, { redirected: false, includeUsage: false });
    assert.deepEqual(booked, [{ usage: undefined, produced: 'He said "hi" \\ then\nnewline, café 😀lookup{"q":error' }]);
  });

  test('the usage frame books the vendor count and is dropped when the client did not ask for usage', () => {
    const { sent, booked } = relay([...STREAM, USAGE], true, { redirected: false, includeUsage: false });
    assert.equal(sent.at(-1), undefined);
    assert.deepEqual(booked[0]?.usage, { prompt_tokens: 7, completion_tokens: 11, total_tokens: 18 });
  });
});
