import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
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

/** A server whose one response is written by `sendFrames` from `frames` (pushed); resolves what sendFrames returned. */
async function serveFrames(frames: () => AsyncIterable<string>): Promise<{ origin: string; port: number; result: Promise<boolean>; close: () => Promise<void> }> {
  let settle!: (open: boolean) => void;
  const result = new Promise<boolean>((resolve) => (settle = resolve));
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
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
    port,
    result,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A client that reads the response's bytes as they came: the head, then each chunk of the chunked encoding as the server
 * framed it (its size line checked against its bytes). `waitFor(n)` resolves once n chunks arrived.
 */
function rawClient(port: number) {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET / HTTP/1.1\r\nhost: test\r\n\r\n');
  let bytes = Buffer.alloc(0);
  let head: string | undefined;
  const chunks: string[] = [];
  let ended = false;
  const waiters: Array<() => void> = [];
  socket.on('data', (data: Buffer) => {
    bytes = Buffer.concat([bytes, data]);
    if (head === undefined) {
      const end = bytes.indexOf('\r\n\r\n');
      if (end < 0) return;
      head = bytes.subarray(0, end).toString('latin1');
      bytes = bytes.subarray(end + 4);
    }
    for (;;) {
      const line = bytes.indexOf('\r\n');
      if (line < 0) break;
      const size = Number.parseInt(bytes.subarray(0, line).toString('latin1'), 16);
      if (bytes.length < line + 2 + size + 2) break;
      assert.equal(bytes.subarray(line + 2 + size, line + 4 + size).toString('latin1'), '\r\n', 'a chunk ends where its size line says');
      if (size === 0) ended = true;
      else chunks.push(bytes.subarray(line + 2, line + 2 + size).toString('utf8'));
      bytes = bytes.subarray(line + 4 + size);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    chunks,
    head: () => head,
    ended: () => ended,
    async waitFor(test: () => boolean): Promise<void> {
      while (!test()) await new Promise<void>((resolve) => waiters.push(resolve));
    },
    close: () => socket.destroy(),
  };
}

test('sendFrames: frames that come in one tick go out as one chunk; a frame that comes later is a chunk of its own, sized in bytes', { timeout: 10_000 }, async () => {
  let release!: () => void;
  const later = new Promise<void>((resolve) => (release = resolve));
  const served = await serveFrames(async function* () {
    yield sseFrame('1');
    yield sseFrame('2');
    yield sseFrame('3');
    await later;
    yield sseFrame('4 — café, 日本');
    yield sseFrame('5');
  });
  const client = rawClient(served.port);
  try {
    // The first three arrive while the fourth is still held back: nothing waits for more frames to come.
    await client.waitFor(() => client.chunks.length === 1);
    assert.match(client.head()!, /^HTTP\/1\.1 200 OK\r\n[^]*transfer-encoding: chunked/i);
    assert.deepEqual(client.chunks, ['data: 1\n\ndata: 2\n\ndata: 3\n\n']);
    release();
    await client.waitFor(() => client.ended());
    assert.deepEqual(client.chunks, ['data: 1\n\ndata: 2\n\ndata: 3\n\n', 'data: 4 — café, 日本\n\ndata: 5\n\n']);
    assert.equal(await served.result, true);
    // The same frames served again, read by an HTTP client that checks the framing (undici): every frame, in order.
    assert.equal(await (await fetch(served.origin)).text(), 'data: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4 — café, 日本\n\ndata: 5\n\n');
  } finally {
    client.close();
    await served.close();
  }
});

test('sendFrames: an HTTP/1.0 client (no chunked encoding) gets the frames as they are, the end of the body closing the connection', { timeout: 10_000 }, async () => {
  const served = await serveFrames(async function* () {
    yield sseFrame('1');
    await setTimeout(20);
    yield sseFrame('2 — 日本');
  });
  try {
    const socket = connect(served.port, '127.0.0.1');
    socket.write('GET / HTTP/1.0\r\n\r\n');
    const received: Buffer[] = [];
    socket.on('data', (data: Buffer) => received.push(data));
    await once(socket, 'end');
    const text = Buffer.concat(received).toString('utf8');
    assert.match(text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.doesNotMatch(text, /transfer-encoding/i);
    assert.equal(text.slice(text.indexOf('\r\n\r\n') + 4), 'data: 1\n\ndata: 2 — 日本\n\n');
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
