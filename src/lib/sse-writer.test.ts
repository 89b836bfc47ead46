import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readServerSentEvents } from '../providers/sse-reader.ts';
import { sseFrame } from './sse-writer.ts';

test('sseFrame: one line as is; a payload of several lines as one data line each, read back the same', async () => {
  assert.equal(sseFrame('{"a":1}'), 'data: {"a":1}\n\n');
  assert.equal(sseFrame('{"a":1}', 'message_start'), 'event: message_start\ndata: {"a":1}\n\n');
  const pretty = JSON.stringify({ usage: { prompt_tokens: 7 }, choices: [] }, null, 2);
  const crlf = '{\r\n"a": 1\r}';
  assert.equal(sseFrame(crlf), 'data: {\ndata: "a": 1\ndata: }\n\n');
  const read: string[] = [];
  for await (const message of readServerSentEvents(Readable.from([sseFrame(pretty), sseFrame(pretty, 'done')]) as never)) read.push(message.data);
  assert.deepEqual(read.map((data) => JSON.parse(data) as unknown), [JSON.parse(pretty), JSON.parse(pretty)]);
  assert.throws(() => sseFrame('x', 'bad\nname'), /CR or LF/);
});
