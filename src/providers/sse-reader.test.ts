import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { readServerSentEventBatches } from './sse-reader.ts';

const read = async (pieces: Array<Buffer | string>): Promise<string[]> => {
  const data: string[] = [];
  for await (const batch of readServerSentEventBatches(Readable.from(pieces))) for (const message of batch) data.push(message.data);
  return data;
};

test('a character split between two chunks arrives whole; a byte-order mark before the first event is dropped', async () => {
  const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('data: café\n\ndata: 日本\n\n')]);
  const e = bytes.indexOf(0xa9); // the second byte of "é"
  const ni = bytes.indexOf(0xe6) + 1; // inside the three bytes of "日"
  // Cut after the mark's first byte, inside "é" and inside "日".
  assert.deepEqual(await read([bytes.subarray(0, 1), bytes.subarray(1, e), bytes.subarray(e, ni), bytes.subarray(ni)]), ['café', '日本']);
});

test('a mark anywhere but at the very start is text; text pieces pass as they are', async () => {
  assert.deepEqual(await read(['data: a\uFEFFb\n\n', 'data: c\n', '\n']), ['a\uFEFFb', 'c']);
});

test('an event left without its blank line at the end of the body is not made up', async () => {
  assert.deepEqual(await read([Buffer.from('data: whole\n\ndata: half')]), ['whole']);
});

test('batches: one a piece of the body, holding the events that piece completed; no empty batch, dropped events left out', async () => {
  const batches: string[][] = [];
  const pieces = ['data: a\n\ndata: b\n\n', 'data: c', '\n\n', 'data: skip\n\n', 'data: d\n\ndata: skip\n\ndata: e\n\n'];
  const map = (message: { data: string }): string | undefined => (message.data === 'skip' ? undefined : message.data);
  for await (const batch of readServerSentEventBatches(Readable.from(pieces), map)) batches.push(batch);
  assert.deepEqual(batches, [['a', 'b'], ['c'], ['d', 'e']]);
});
