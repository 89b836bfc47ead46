import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HttpClient, operationOf, parseJsonBody } from './http-client.ts';
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
      response.writeHead(200, { 'content-type': 'application/json', 'x-method': request.method ?? '' });
      // Written in pieces, with a character split across two of them.
      const text = JSON.stringify({ got: JSON.parse(body), auth: request.headers.authorization, word: 'café' });
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

  test('a 2xx answer comes back whole, headers and text, sent with method, headers and body', async () => {
    const answer = await client.sendForText(`${origin}/v1/echo?x=1`, { headers: { authorization: 'Bearer k', 'content-type': 'application/json' }, body: '{"q":1}' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['x-method'], 'POST');
    assert.deepEqual(parseJsonBody(answer.text), { got: { q: 1 }, auth: 'Bearer k', word: 'café' });
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

test('operationOf labels a path without its ids, and the same URL twice the same way', () => {
  assert.equal(operationOf('https://api.example.com/v1/videos/video_6f2/content?x=1'), 'videos/:id/content');
  assert.equal(operationOf('https://api.example.com/v1/chat/completions'), 'chat/completions');
  assert.equal(operationOf('https://api.example.com/v1/chat/completions'), 'chat/completions');
});
