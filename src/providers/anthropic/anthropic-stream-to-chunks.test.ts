import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { ChatChunk, ChatStreamEvent, JsonObject } from '../../core/chat-types.ts';
import { serverSentEvents } from '../sse-reader.ts';
import { UpstreamError } from '../upstream-error.ts';
import { anthropicMessageSchema } from './anthropic-api-schemas.ts';
import { AnthropicStreamToChunks, parseAnthropicStreamEvent } from './anthropic-stream-to-chunks.ts';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.ts';

const CREATED = 1_762_000_000;
const fixtureText = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

/** Runs an SSE body through the same path as the provider, fed in small pieces so frames split across reads. */
async function convertStream(sse: string, includeUsage: boolean, reasoning = false): Promise<ChatStreamEvent[]> {
  const bytes = Buffer.from(sse, 'utf8');
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 37) pieces.push(bytes.subarray(at, at + 37));
  const converter = new AnthropicStreamToChunks({ includeUsage, createdSeconds: CREATED, reasoning });
  const out: ChatStreamEvent[] = [];
  const decoder = serverSentEvents();
  for (const batch of [...pieces.map((piece) => decoder.feed(piece)), decoder.end()]) {
    for (const message of batch) {
      const event = parseAnthropicStreamEvent(message.data);
      if (event) out.push(...converter.convert(event));
    }
  }
  return out;
}

function chunksOf(events: readonly ChatStreamEvent[]): ChatChunk[] {
  return events.map((event) => {
    assert.equal(event.kind, 'chunk');
    if (event.kind !== 'chunk') throw new Error('not a chunk');
    assert.equal(event.raw, JSON.stringify(event.chunk), 'raw is the chunk as sent');
    return event.chunk;
  });
}

const deltas = (chunks: readonly ChatChunk[]): JsonObject[] => chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.delta));

const sse = (...events: JsonObject[]): string => events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`).join('');
const START = { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5-20251001', content: [], usage: { input_tokens: 10, output_tokens: 1 } } };

describe('text stream with prompt-cache usage', () => {
  test('role chunk first, then the text, one finish chunk, and the usage chunk with cache tokens', async () => {
    const chunks = chunksOf(await convertStream(fixtureText('anthropic-cached-text.chunks.txt'), true));
    for (const chunk of chunks) {
      assert.equal(chunk.id, 'msg_01Sim0000000000000000005');
      assert.equal(chunk.object, 'chat.completion.chunk');
      assert.equal(chunk.model, 'claude-sonnet-4-5-20250929');
      assert.equal(chunk.created, CREATED);
    }
    assert.deepEqual(chunks[0]?.choices, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
    const text = deltas(chunks).map((delta) => delta.content ?? '').join('');
    assert.equal(text, 'Simulated reply to: Here is the long document. Here is the l alp');
    const finishes = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    assert.deepEqual(finishes.map((chunk) => chunk.choices), [[{ index: 0, delta: {}, finish_reason: 'stop' }]]);
    const last = chunks.at(-1);
    assert.deepEqual(last?.choices, []);
    // message_start: input 9, cache write 578 (1h: 308), cache read 300; message_delta: output 16 in total.
    assert.deepEqual(last?.usage, {
      prompt_tokens: 9 + 578 + 300,
      completion_tokens: 16,
      total_tokens: 9 + 578 + 300 + 16,
      prompt_tokens_details: { cached_tokens: 300 },
      cache_creation_input_tokens: 578,
      cache_creation_1h_input_tokens: 308,
    });
    assert.equal(chunks.filter((chunk) => 'usage' in chunk).length, 1, 'only the usage chunk carries usage');
  });

  test('without include_usage there is no usage chunk', async () => {
    const chunks = chunksOf(await convertStream(fixtureText('anthropic-cached-text.chunks.txt'), false));
    assert.ok(chunks.every((chunk) => chunk.choices.length === 1 && !('usage' in chunk)));
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'stop');
  });
});

describe('thinking and a tool call', () => {
  test('thinking is dropped; the tool call opens with id and name, then its arguments arrive in pieces', async () => {
    const chunks = chunksOf(await convertStream(fixtureText('anthropic-thinking-tool-use.chunks.txt'), true));
    const all = deltas(chunks);
    assert.ok(all.every((delta) => !('thinking' in delta) && (delta.content === undefined || delta.content === '')), 'no thinking text in the content');
    const toolDeltas = all.filter((delta) => delta.tool_calls !== undefined).map((delta) => (delta.tool_calls as JsonObject[])[0]);
    assert.deepEqual(toolDeltas[0], { index: 0, id: 'toolu_01Sim0000000000000000003', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.ok(toolDeltas.slice(1).every((delta) => delta?.index === 0 && !('id' in delta)));
    const argumentsText = toolDeltas.map((delta) => (delta?.function as JsonObject).arguments).join('');
    assert.equal(argumentsText, '{"city":"sample","unit":"celsius"}');
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(chunks.at(-1)?.usage?.completion_tokens, 23);
  });

  test('the stream says what the non-stream answer says', async () => {
    const chunks = chunksOf(await convertStream(fixtureText('anthropic-thinking-tool-use.chunks.txt'), true));
    const plain = convertFromAnthropicResponse(anthropicMessageSchema.parse(JSON.parse(fixtureText('anthropic-thinking-tool-use.json'))), CREATED);
    const call = (plain.choices[0]?.message.tool_calls as JsonObject[])[0]?.function as JsonObject;
    const streamed = deltas(chunks).flatMap((delta) => (delta.tool_calls as JsonObject[] | undefined) ?? []);
    assert.equal(streamed.map((piece) => (piece.function as JsonObject).arguments).join(''), call.arguments);
    assert.deepEqual({ ...chunks.at(-1)?.usage }, { ...plain.usage });
  });

  test('tool indexes count tool_use blocks, not content blocks; a call without arguments gets "{}"', async () => {
    const chunks = chunksOf(
      await convertStream(
        sse(
          START,
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Checking.' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_a', name: 'now', input: {} } },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } },
          { type: 'content_block_stop', index: 1 },
          { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: {} } },
          { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Rome"}' } },
          { type: 'content_block_stop', index: 2 },
          { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
          { type: 'message_stop' },
        ),
        false,
      ),
    );
    const calls = deltas(chunks).flatMap((delta) => (delta.tool_calls as JsonObject[] | undefined) ?? []);
    assert.deepEqual(calls, [
      { index: 0, id: 'toolu_a', type: 'function', function: { name: 'now', arguments: '' } },
      { index: 0, function: { arguments: '{}' } },
      { index: 1, id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 1, function: { arguments: '{"city":"Rome"}' } },
    ]);
  });
});

describe('stream events', () => {
  test('message_delta usage is cumulative: the last one counts, once; one finish chunk for several deltas', async () => {
    const chunks = chunksOf(
      await convertStream(
        sse(
          START,
          { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 40 } },
          { type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 50, cache_read_input_tokens: 4 } },
          { type: 'message_stop' },
        ),
        true,
      ),
    );
    assert.equal(chunks.filter((chunk) => chunk.choices[0]?.finish_reason === 'length').length, 1);
    assert.deepEqual(chunks.at(-1)?.usage, { prompt_tokens: 14, completion_tokens: 50, total_tokens: 64, prompt_tokens_details: { cached_tokens: 4 } });
  });

  test('a repeated message_start gives no second role chunk', async () => {
    const chunks = chunksOf(await convertStream(sse(START, START, { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }, { type: 'message_stop' }), true));
    assert.equal(chunks.filter((chunk) => chunk.choices[0]?.delta.role === 'assistant').length, 1);
    assert.equal(chunks.at(-1)?.usage?.prompt_tokens, 10);
  });

  test('an error event becomes an error in the OpenAI shape; pings and unknown events give nothing', async () => {
    const events = await convertStream(
      sse(START, { type: 'ping' }, { type: 'future_event', detail: 1 }, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      true,
    );
    assert.equal(events.length, 2);
    const error = events[1];
    assert.equal(error?.kind, 'error');
    assert.deepEqual(error?.kind === 'error' ? error.error : undefined, { message: 'Overloaded', type: 'overloaded_error', param: null, code: null });
  });

  test('a frame that is not JSON, or a known event that does not parse, is a broken upstream (502)', () => {
    assert.throws(() => parseAnthropicStreamEvent('{oops'), (error: unknown) => error instanceof UpstreamError && error.status === 502);
    assert.throws(
      () => parseAnthropicStreamEvent(JSON.stringify({ type: 'content_block_delta', delta: { type: 'text_delta', text: 'x' } })),
      (error: unknown) => error instanceof UpstreamError && error.status === 502 && /content_block_delta/.test(error.message),
    );
    assert.equal(parseAnthropicStreamEvent(JSON.stringify({ type: 'compaction_delta' })), undefined);
  });
});

describe('thinking asked for (the Responses path)', () => {
  test('thinking deltas become reasoning_content, the signature a thinking_blocks delta, before the tool call', async () => {
    const chunks = chunksOf(await convertStream(fixtureText('anthropic-thinking-tool-use.chunks.txt'), true, true));
    const all = deltas(chunks);
    const reasoning = all.map((delta) => (typeof delta.reasoning_content === 'string' ? delta.reasoning_content : '')).join('');
    const plain = convertFromAnthropicResponse(anthropicMessageSchema.parse(JSON.parse(fixtureText('anthropic-thinking-tool-use.json'))), CREATED, true);
    assert.ok(reasoning.length > 0);
    assert.equal(reasoning, plain.choices[0]?.message.reasoning_content);
    const signatureAt = all.findIndex((delta) => Array.isArray(delta.thinking_blocks));
    const toolAt = all.findIndex((delta) => Array.isArray(delta.tool_calls));
    assert.ok(signatureAt >= 0 && signatureAt < toolAt, 'the signature closes the thinking before the tool call opens');
    const signature = String((all[signatureAt]!.thinking_blocks as JsonObject[])[0]!.signature);
    assert.deepEqual(plain.choices[0]?.message.thinking_blocks, [{ type: 'thinking', thinking: reasoning, signature }]);
  });
});
