import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerSentEventDecoder, serverSentEvents } from './sse-reader.ts';

const read = (pieces: Array<Buffer | string>): string[] => {
  const decoder = serverSentEvents();
  const data: string[] = [];
  for (const piece of pieces) for (const message of decoder.feed(piece)) data.push(message.data);
  for (const message of decoder.end()) data.push(message.data);
  return data;
};

test('a character split between two chunks arrives whole; a byte-order mark before the first event is dropped', () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: café\n\ndata: 日本\n\n')]);
  const e = bytes.indexOf(0xa9); // the second byte of "é"
  const ni = bytes.indexOf(0xe6) + 1; // inside the three bytes of "日"
  // Cut after the mark's first byte, inside "é" and inside "日".
  assert.deepEqual(read([bytes.subarray(0, 1), bytes.subarray(1, e), bytes.subarray(e, ni), bytes.subarray(ni)]), ['café', '日本']);
});

test('a mark anywhere but at the very start is text; text pieces pass as they are', () => {
  assert.deepEqual(read(['data: a\uFEFFb\n\n', 'data: c\n', '\n']), ['a\uFEFFb', 'c']);
});

test('an event left without its blank line at the end of the body is not made up', () => {
  assert.deepEqual(read([Buffer.from('data: whole\n\ndata: half')]), ['whole']);
});

test('feed: the values a piece of the body completed, as `map` made them; dropped events left out', () => {
  const decoder = new ServerSentEventDecoder<string>((message, out) => {
    if (message.data !== 'skip') out.push(message.data);
  });
  const pieces = ['data: a\n\ndata: b\n\n', 'data: c', '\n\n', 'data: skip\n\n', 'data: d\n\ndata: skip\n\ndata: e\n\n'];
  assert.deepEqual(
    pieces.map((piece) => decoder.feed(piece)),
    [['a', 'b'], [], ['c'], [], ['d', 'e']],
  );
});

test('a message `map` says ends the stream completes the decoder: what follows it is dropped, in the same piece or later', () => {
  const decoder = new ServerSentEventDecoder<string>((message, out) => {
    out.push(message.data);
    return message.data === 'end';
  });
  assert.equal(decoder.complete, false);
  assert.deepEqual(decoder.feed('data: a\n\ndata: end\n\ndata: after\n\n'), ['a', 'end']);
  assert.equal(decoder.complete, true);
  assert.deepEqual(decoder.feed('data: later\n\n'), []);
  assert.deepEqual(decoder.end(), []);
});
