import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { setTimeout } from 'node:timers/promises';
import { serverSentEvents } from '../providers/sse-reader.ts';
import { pushed } from './push-stream.ts';
import { sendFrames, sseFrame } from './sse-writer.ts';

test('sseFrame: one line as is; a payload of several lines as one data line each, read back the same', async () => {
  assert.equal(sseFrame('{"a":1}'), 'data: {"a":1}\n\n');
  assert.equal(sseFrame('{"a":1}', 'message_start'), 'event: message_start\ndata: {"a":1}\n\n');
  const pretty = JSON.stringify({ usage: { prompt_tokens: 7 }, choices: [] }, null, 2);
  const crlf = '{\r\n"a": 1\r}';
  assert.equal(sseFrame(crlf), 'data: {\ndata: "a": 1\ndata: }\n\n');
  const decoder = serverSentEvents();
  const read = [...decoder.feed(sseFrame(pretty)), ...decoder.feed(sseFrame(pretty, 'done')), ...decoder.end()].map((message) => message.data);
  assert.deepEqual(read.map((data) => JSON.parse(data) as unknown), [JSON.parse(pretty), JSON.parse(pretty)]);
  assert.throws(() => sseFrame('x', 'bad\nname'), /CR or LF/);
});

/** A server whose one response is written by `sendFrames` from `frames` (pushed); resolves what sendFrames returned and each write. */
async function serveFrames(frames: () => AsyncIterable<string>): Promise<{ origin: string; writes: string[]; result: Promise<boolean>; close: () => Promise<void> }> {
  const writes: string[] = [];
  let settle!: (open: boolean) => void;
  const result = new Promise<boolean>((resolve) => (settle = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = response.write.bind(response) as (chunk: string) => boolean;
    response.write = ((chunk: string) => {
      writes.push(chunk);
      return write(chunk);
    }) as typeof response.write;
    void sendFrames(response, pushed(frames())).then((open) => {
      settle(open);
      response.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    writes,
    result,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

test('sendFrames: frames that come in one tick go out as one write; a frame that comes later is written in its own tick', async () => {
  let release!: () => void;
  const later = new Promise<void>((resolve) => (release = resolve));
  const served = await serveFrames(async function* () {
    yield sseFrame('1');
    yield sseFrame('2');
    yield sseFrame('3');
    await later;
    yield sseFrame('4');
  });
  try {
    const response = await fetch(served.origin);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    // The first three arrive while the fourth is still held back: nothing waits for more frames to come.
    while (!text.includes('data: 3\n\n')) text += decoder.decode((await reader.read()).value);
    assert.equal(text, 'data: 1\n\ndata: 2\n\ndata: 3\n\n');
    release();
    for (let part = await reader.read(); !part.done; part = await reader.read()) text += decoder.decode(part.value);
    assert.equal(text, 'data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n');
    assert.deepEqual(served.writes, ['data: 1\n\ndata: 2\n\ndata: 3\n\n', 'data: 4\n\n']);
    assert.equal(await served.result, true);
  } finally {
    await served.close();
  }
});

test('sendFrames: a client that does not read holds the frames back (back-pressure), and then gets every one in order', async () => {
  const FRAMES = 2_000;
  let produced = 0;
  const frame = (index: number): string => sseFrame(`${String(index).padStart(6, '0')}${'x'.repeat(16_000)}`);
  const served = await serveFrames(async function* () {
    for (let index = 0; index < FRAMES; index++) {
      produced = index + 1;
      yield frame(index);
    }
  });
  const client = request(served.origin);
  try {
    const [response] = (await once(client.end(), 'response')) as [IncomingMessage];
    response.pause();
    await setTimeout(300);
    // 32 MB were on offer; what left the generator is what the socket buffers hold, a few MB at most.
    assert.ok(produced < FRAMES / 2, `produced ${produced} of ${FRAMES} frames while the client read nothing`);
    response.setEncoding('utf8');
    let text = '';
    response.on('data', (chunk: string) => (text += chunk));
    response.resume();
    await once(response, 'end');
    assert.equal(text.length, FRAMES * frame(0).length);
    for (const index of [0, 1, 999, FRAMES - 1]) assert.equal(text.slice(index * frame(0).length, (index + 1) * frame(0).length), frame(index));
    assert.equal(await served.result, true);
  } finally {
    await served.close();
  }
});

test('sendFrames: frames before a failure are written before it is thrown, so an error frame written after comes last', async () => {
  const writes: string[] = [];
  const response = {
    destroyed: false,
    writableEnded: false,
    write: (chunk: string) => writes.push(chunk) > 0,
    on: () => undefined,
    off: () => undefined,
  } as unknown as ServerResponse;
  const failing = async function* (): AsyncGenerator<string> {
    yield sseFrame('1');
    yield sseFrame('2');
    throw new Error('vendor cut the stream');
  };
  await assert.rejects(sendFrames(response, pushed(failing())), /vendor cut the stream/);
  response.write(sseFrame('error'));
  assert.deepEqual(writes, ['data: 1\n\ndata: 2\n\n', 'data: error\n\n']);
});

test('sendFrames: a client gone in the middle ends it with false and stops pulling frames', async () => {
  let produced = 0;
  const served = await serveFrames(async function* () {
    for (let index = 0; index < 1_000_000; index++) {
      produced = index + 1;
      yield sseFrame('x'.repeat(1_000));
      if (index % 100 === 99) await setTimeout(1);
    }
  });
  try {
    const client = request(served.origin);
    const [response] = (await once(client.end(), 'response')) as [IncomingMessage];
    await once(response, 'data');
    response.destroy();
    assert.equal(await served.result, false);
    const stopped = produced;
    await setTimeout(50);
    assert.equal(produced, stopped);
    assert.ok(stopped < 1_000_000);
  } finally {
    await served.close();
  }
});
