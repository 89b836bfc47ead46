import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChatChunk } from '../../core/chat-types.ts';
import { deltaText } from '../../features/inference/chat-completions-relay.ts';
import { decodeJsonText } from '../../lib/json-scan.ts';
import { scanChatChunk } from './chat-chunk-scan.ts';

const frame = (delta: Record<string, unknown>, extra: Record<string, unknown> = { usage: null }): string =>
  JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta, finish_reason: null }], ...extra });

/** What a parse of the frame says the relay needs: the deltas' text, and whether it has `usage: null`. */
function parsedView(raw: string): { text: string; usageNull: boolean } {
  const chunk = JSON.parse(raw) as ChatChunk;
  return { text: (chunk.choices ?? []).map((choice) => deltaText(choice.delta)).join(''), usageNull: 'usage' in chunk && chunk.usage === null };
}

describe('scanChatChunk', () => {
  const passing: Array<[string, string]> = [
    ['plain content', frame({ content: 'Hello' })],
    ['the first frame (role, empty content)', frame({ role: 'assistant', content: '' })],
    ['escapes: quotes, backslashes, newlines, unicode', frame({ content: 'say "hi"\\ \n\tcafé 😀 \u2028' })],
    ['text that looks like keys', frame({ content: 'the "content": "x" and "usage": {"a":1} and \\"error\\"' })],
    ['content null (the last frame)', frame({}, { usage: null, choices: [{ index: 0, delta: { content: null }, finish_reason: 'stop' }] })],
    ['no usage key', frame({ content: 'x' }, {})],
    ['reasoning text is not content', frame({ reasoning_content: 'thinking', content: 'answer' })],
    ['two choices', JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'a' } }, { index: 1, delta: { content: 'b' } }] })],
    ['content that is exactly "error" or "usage"', frame({ content: 'error' }, { usage: null, note: 'usage' })],
    ['blanks around colons', '{"id": "c", "choices": [{"index": 0, "delta": {"content" : "spaced"}}], "usage" :  null}'],
    ['line breaks and tabs around colons', '{"id":"c","choices":[{"index":0,"delta":{"content"\t:\r\n"tabbed"}}],"usage"\r\n:\n\tnull}'],
  ];
  for (const [name, raw] of passing) {
    test(`${name}: scanned, with the text and usage a parse finds`, () => {
      const scanned = scanChatChunk(raw);
      assert.ok(scanned, 'scanned');
      assert.equal(decodeJsonText(scanned.escapedText), parsedView(raw).text);
      assert.equal(scanned.usageNull, parsedView(raw).usageNull);
      assert.deepEqual(scanned.chunk, JSON.parse(raw), 'the chunk is still there when asked for');
      assert.equal(scanned.raw, raw);
    });
  }

  const usageFrames: Array<[string, string, boolean]> = [
    ['the usage frame', frame({}, { usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8, prompt_tokens_details: { cached_tokens: 1 } }, choices: [] }), true],
    ['a usage object after blanks', '{"id":"c","choices": [ ],"usage" : {"prompt_tokens":1}}', true],
    ['usage on a frame that still has choices', frame({ content: 'last words' }, { usage: { prompt_tokens: 2, completion_tokens: 2, total_tokens: 4 } }), false],
  ];
  for (const [name, raw, choicesEmpty] of usageFrames) {
    test(`${name}: scanned, its usage parsed alone and placed in the text`, () => {
      const scanned = scanChatChunk(raw);
      assert.ok(scanned?.usageObject, 'scanned with a usage object');
      const { usage, start, end } = scanned.usageObject;
      const parsed = JSON.parse(raw) as { usage: unknown };
      assert.deepEqual(usage, parsed.usage);
      assert.deepEqual(JSON.parse(raw.slice(start, end)), parsed.usage, 'the range is the usage text');
      assert.equal(scanned.usageObject.choicesEmpty, choicesEmpty);
      assert.equal(decodeJsonText(scanned.escapedText), parsedView(raw).text);
      assert.equal(scanned.usageNull, false);
    });
  }

  const parsedInstead: Array<[string, string]> = [
    ['a usage object below the top level', '{"id":"c","choices":[],"vendor":{"usage":{"prompt_tokens":1}}}'],
    ['a usage object that does not parse', '{"id":"c","choices":[],"usage":{"prompt_tokens":tru}}'],
    ['a usage object and a usage null', '{"id":"c","choices":[],"usage":null,"usage":{"prompt_tokens":1}}'],
    ['an error', '{"error":{"message":"overloaded","type":"server_error"}}'],
    ['an error with blanks around its colon', '{"error" \n: {"message":"overloaded"}}'],
    ['tool calls with blanks around their colon', '{"choices":[{"delta":{"tool_calls"\t:\t[{"index":0}]}}]}'],
    ['tool calls', frame({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{"a' } }] })],
    ['content as an array', frame({ content: [{ type: 'text', text: 'x' }] })],
    ['not an object', 'not json'],
    ['an unterminated string', '{"choices":[{"delta":{"content":"abc}'],
  ];
  for (const [name, raw] of parsedInstead) {
    test(`${name}: left to a full parse`, () => {
      assert.equal(scanChatChunk(raw), undefined);
    });
  }
});
