import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HttpClient, operationOf, parseJsonBody, rawHeaderValue, type UpstreamBody } from './http-client.ts';
import { UpstreamError } from './upstream-error.ts';

type Route = (request: IncomingMessage, body: string, response: ServerResponse) => void;

describe('HttpClient.sendForText: the whole-answer path gives what send + reading the body gives', () => {
  let server: Server;
  let origin: string;
  const routes = new Map<string, Route>();
  const observed: Array<{ provider: string; operation: string }> = [];
  const client = new HttpClient(1_000, { observe: (provider, operation) => observed.push({ provider, operation }) }).forProvider('vendor');

  before(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (piece: string) => (body += piece));
      request.on('end', () => routes.get(request.url ?? '')?.(request, body, response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    routes.set('/v1/echo?x=1', (request, body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      // Written in pieces, with a character split across two of them.
      const text = JSON.stringify({ got: JSON.parse(body), method: request.method, auth: request.headers.authorization, word: 'café' });
      const bytes = Buffer.from(text);
      const cut = bytes.indexOf(0xa9); // inside the two bytes of "é"
      response.write(bytes.subarray(0, cut));
      setTimeout(() => response.end(bytes.subarray(cut)), 5);
    });
    routes.set('/v1/limited', (_request, _body, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' }).end('{"error":{"message":"slow down"}}');
    });
    routes.set('/v1/slow', (_request, _body, response) => {
      setTimeout(() => response.writeHead(200).end('{}'), 3_000);
    });
    routes.set('/v1/broken', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"half":');
    });
  });
  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a 2xx answer comes back whole, sent with method, headers and body', async () => {
    const answer = await client.sendForText(`${origin}/v1/echo?x=1`, { headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"q":1}' });
    assert.equal(answer.status, 200);
    assert.deepEqual(parseJsonBody(answer.text), { got: { q: 1 }, method: 'POST', auth: 'Bearer k', word: 'café' });
    assert.deepEqual(observed.at(-1), { provider: 'vendor', operation: 'echo' }, 'the latency is observed under the operation');
  });

  test('a non-2xx answer is an UpstreamError with the body, content type and retry-after', async () => {
    const error = await client.sendForText(`${origin}/v1/limited`, { headers: {}, body: '{}' }).then(
      () => assert.fail('should fail'),
      (failure: unknown) => failure,
    );
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.status, 429);
    assert.equal(error.body, '{"error":{"message":"slow down"}}');
    assert.equal(error.retryAfterMs, 7_000);
    assert.equal(error.failsOver, true);
  });

  test('an unreachable vendor is a 502 network failure', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const error = await client.sendForText(`http://127.0.0.1:${port}/v1/x`, { headers: {}, body: '{}' }).catch((failure: unknown) => failure);
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.status, 502);
    assert.equal(error.kind, 'network');
  });

  test('no answer head within the timeout is a 504', async () => {
    const error = await client.sendForText(`${origin}/v1/slow`, { headers: {}, body: '{}' }).catch((failure: unknown) => failure);
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.status, 504);
    assert.equal(error.kind, 'timeout');
  });

  test("the caller's abort stops the call, before it is sent and while it waits", async () => {
    const early = new AbortController();
    early.abort();
    await assert.rejects(client.sendForText(`${origin}/v1/slow`, { headers: {}, body: '{}', signal: early.signal }), UpstreamError);
    const late = new AbortController();
    const started = Date.now();
    setTimeout(() => late.abort(), 50);
    await assert.rejects(client.sendForText(`${origin}/v1/slow`, { headers: {}, body: '{}', signal: late.signal }), UpstreamError);
    assert.ok(Date.now() - started < 900, 'rejected at the abort, not at the timeout');
  });

  test('a 2xx body that is not JSON is a 502 when parsed', async () => {
    const answer = await client.sendForText(`${origin}/v1/broken`, { headers: {}, body: '{}' });
    assert.throws(() => parseJsonBody(answer.text), (error: unknown) => error instanceof UpstreamError && error.status === 502);
  });
});

describe('HttpClient.send: a 2xx body read as it arrives', () => {
  let server: Server;
  let origin: string;
  const routes = new Map<string, Route>();
  const client = new HttpClient(5_000);
  /** What the vendor saw of the last /v1/big answer: bytes it got written, and whether the gateway dropped it early. */
  const big = { written: 0, closedEarly: undefined as Promise<boolean> | undefined };
  // The alphabet over and over, in pieces of a whole number of alphabets (~64 KB), ~48 MB in all.
  const PIECE = Buffer.alloc(26 * 2520, 'abcdefghijklmnopqrstuvwxyz');
  const BIG_BYTES = PIECE.length * 768;

  before(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => routes.get(request.url ?? '')?.(request, '', response));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    routes.set('/v1/big', (_request, _body, response) => {
      big.written = 0;
      big.closedEarly = new Promise((resolve) => response.on('close', () => resolve(!response.writableFinished)));
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      // As fast as the socket takes it: a write that returns false waits for 'drain', as a vendor's server does.
      const pump = (): void => {
        while (big.written < BIG_BYTES && !response.destroyed) {
          big.written += PIECE.length;
          if (!response.write(PIECE)) return void response.once('drain', pump);
        }
        if (!response.destroyed) response.end();
      };
      pump();
    });
    routes.set('/v1/cut', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
      setTimeout(() => response.socket?.destroy(), 20);
    });
    routes.set('/v1/words', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"word":"caf');
      setTimeout(() => response.end('é"}'), 5);
    });
    routes.set('/v1/refused', (_request, _body, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.write('{"error":');
      setTimeout(() => response.end('{"message":"bad"}}'), 5);
    });
  });
  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  test('a reader slower than the vendor holds the vendor back (backpressure) and still gets every byte, in order', async () => {
    const response = await client.send(`${origin}/v1/big`, { headers: {}, body: '{}' });
    assert.equal(response.status, 200);
    assert.equal(response.contentType, 'application/octet-stream');
    let received = 0;
    let inOrder = true;
    let stalled = false;
    for await (const chunk of response.body) {
      // Each byte is the alphabet at its offset: a lost, doubled or reordered chunk breaks the sequence.
      inOrder &&= chunk[0] === 97 + (received % 26);
      received += chunk.length;
      if (!stalled && received > 0) {
        stalled = true;
        await new Promise((resolve) => setTimeout(resolve, 300));
        // The gateway stopped reading the socket: the vendor could not write the answer out while the reader slept.
        assert.ok(big.written < BIG_BYTES / 2, `the vendor wrote ${big.written} of ${BIG_BYTES} bytes while nothing was read`);
      }
    }
    assert.equal(received, BIG_BYTES);
    assert.ok(inOrder, 'every chunk continues where the last one ended');
    assert.equal(await big.closedEarly, false);
    assert.equal(response.body.destroyed, true, 'read to its end');
  });

  test('destroy() before the end drops the request at once; reads after it end the body, and destroying again is harmless', async () => {
    const response = await client.send(`${origin}/v1/big`, { headers: {}, body: '{}' });
    const iterator = response.body[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).done, false);
    response.body.destroy();
    assert.equal(response.body.destroyed, true);
    assert.equal(await big.closedEarly, true, 'the vendor saw the request dropped');
    assert.deepEqual(await iterator.next(), { done: true, value: undefined });
    response.body.destroy();
    assert.throws(() => response.body[Symbol.asyncIterator](), /only once/);
  });

  test('a body that breaks off: the chunks before the break, then its error', async () => {
    const response = await client.send(`${origin}/v1/cut`, { headers: {}, body: '{}' });
    const seen: string[] = [];
    const failure = await (async () => {
      for await (const chunk of response.body) seen.push(chunk.toString('utf8'));
    })().then(() => undefined, (error: unknown) => error);
    assert.deepEqual(seen, ['data: one\n\n']);
    assert.ok(failure instanceof Error, 'the break is an error, not a quiet end');
  });

  /** Reads a body pushed (`start`): the chunks as they come, then how it ended. `onChunk` may pause the body. */
  function pushedRead(body: UpstreamBody, onChunk: (chunk: Buffer) => void = () => undefined) {
    const chunks: Buffer[] = [];
    const ended = new Promise<{ error?: unknown }>((resolve) => {
      body.start({
        next: (chunk) => {
          chunks.push(chunk);
          onChunk(chunk);
        },
        end: () => resolve({}),
        fail: (error) => resolve({ error }),
      });
    });
    return { chunks, ended };
  }

  test('pushed (start): a reader that pauses holds the vendor back; resumed, it gets every byte in order, then the end', async () => {
    const response = await client.send(`${origin}/v1/big`, { headers: {}, body: '{}' });
    let received = 0;
    let inOrder = true;
    let onPaused!: () => void;
    const paused = new Promise<void>((resolve) => (onPaused = resolve));
    let pausing = true;
    const { ended } = pushedRead(response.body, (chunk) => {
      inOrder &&= chunk[0] === 97 + (received % 26);
      received += chunk.length;
      if (pausing) {
        pausing = false;
        response.body.pause();
        onPaused();
      }
    });
    await paused;
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The gateway stopped reading the socket: the vendor could not write the answer out while the reader was paused.
    assert.ok(big.written < BIG_BYTES / 2, `the vendor wrote ${big.written} of ${BIG_BYTES} bytes while the reader was paused`);
    assert.ok(received < BIG_BYTES / 4, `${received} bytes were pushed to a paused reader`);
    response.body.resume();
    assert.deepEqual(await ended, {});
    assert.equal(received, BIG_BYTES);
    assert.ok(inOrder, 'every chunk continues where the last one ended');
    assert.equal(await big.closedEarly, false);
    assert.throws(() => response.body[Symbol.asyncIterator](), /only once/);
  });

  test('pushed: what arrived before the reader started is handed over first, then the end it already had', async () => {
    const response = await client.send(`${origin}/v1/words`, { headers: {}, body: '{}' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { chunks, ended } = pushedRead(response.body);
    assert.deepEqual(await ended, {});
    assert.equal(Buffer.concat(chunks).toString('utf8'), '{"word":"café"}');
  });

  test('pushed: a body that breaks off: the chunks before the break, then its error; destroy() tells the reader nothing more', async () => {
    const cut = await client.send(`${origin}/v1/cut`, { headers: {}, body: '{}' });
    const read = pushedRead(cut.body);
    const { error } = await read.ended;
    assert.ok(error instanceof Error, 'the break is an error, not a quiet end');
    assert.deepEqual(read.chunks.map((chunk) => chunk.toString('utf8')), ['data: one\n\n']);

    const dropped = await client.send(`${origin}/v1/big`, { headers: {}, body: '{}' });
    let settled = false;
    const first = new Promise<void>((resolve) => {
      dropped.body.start({ next: () => resolve(), end: () => (settled = true), fail: () => (settled = true) });
    });
    await first;
    dropped.body.destroy();
    assert.equal(await big.closedEarly, true, 'the vendor saw the request dropped');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(settled, false);
  });

  test('text() and json() read a 2xx body whole (a character split between chunks included); arrayBuffer() its bytes', async () => {
    assert.deepEqual(await (await client.send(`${origin}/v1/words`, { headers: {}, body: '{}' })).body.json(), { word: 'café' });
    assert.equal(await (await client.send(`${origin}/v1/words`, { headers: {}, body: '{}' })).body.text(), '{"word":"café"}');
    const bytes = await (await client.send(`${origin}/v1/words`, { headers: {}, body: '{}' })).body.arrayBuffer();
    assert.deepEqual(Buffer.from(bytes), Buffer.from('{"word":"café"}'));
  });

  test('a non-2xx answer is read whole and thrown as UpstreamError; no body is handed out', async () => {
    const error = await client.send(`${origin}/v1/refused`, { headers: {}, body: '{}' }).catch((failure: unknown) => failure);
    assert.ok(error instanceof UpstreamError);
    assert.equal(error.status, 400);
    assert.equal(error.body, '{"error":{"message":"bad"}}');
    assert.equal(error.failsOver, false);
  });
});

test('operationOf labels a path without its ids, and the same URL twice the same way', () => {
  assert.equal(operationOf('https://api.example.com/v1/videos/video_6f2/content?x=1'), 'videos/:id/content');
  assert.equal(operationOf('https://api.example.com/v1/chat/completions'), 'chat/completions');
  assert.equal(operationOf('https://api.example.com/v1/chat/completions'), 'chat/completions');
});

test("a header's value is found among the raw buffers whatever the case of its name; the first of a repeated field; none when absent", () => {
  const raw = (...fields: string[]) => fields.map((field) => Buffer.from(field, 'latin1'));
  const name = Buffer.from('content-type', 'latin1');
  const head = raw('Date', 'Sat, 28 Nov 2026 09:00:00 GMT', 'content-typo', 'wrong/one', 'Content-Type', 'text/event-stream; charset=utf-8', 'CONTENT-TYPE', 'second/one');
  assert.equal(rawHeaderValue(head, name), 'text/event-stream; charset=utf-8');
  assert.equal(rawHeaderValue(raw('CONTENT-TYPE', 'application/json'), name), 'application/json');
  assert.equal(rawHeaderValue(raw('content_type', 'x/y', 'content-length', '12'), name), undefined, 'a name that differs by one byte is another field');
  assert.equal(rawHeaderValue(raw('content-type', ''), name), '', 'an empty value is a value');
  assert.equal(rawHeaderValue([], name), undefined);
  assert.equal(rawHeaderValue(raw('x-note', 'caf\u00e9'), Buffer.from('x-note')), 'caf\u00e9', 'read as latin1, as undici reads a head');
});
