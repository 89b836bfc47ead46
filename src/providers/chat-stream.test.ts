import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ChatStreamEvent } from '../core/chat-types.ts';
import { HttpClient, type UpstreamResponse } from './http-client.ts';
import { openChatStream } from './chat-stream.ts';
import type { ChatStream } from './provider.ts';
import { ServerSentEventDecoder } from './sse-reader.ts';
import { UpstreamError } from './upstream-error.ts';
import { CallAbort, type CallSignal } from '../lib/call-abort.ts';

/**
 * A vendor whose streaming answers stay open until the test writes or ends them, over real HTTP (undici, as the gateway
 * sends): `aborted` tells whether the gateway side dropped a request before its answer was complete.
 */
function streamingVendor() {
  const answers: Array<{ response: ServerResponse; aborted: Promise<boolean> }> = [];
  const waiting: Array<() => void> = [];
  const server = createServer((incoming, response) => {
    incoming.resume();
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.flushHeaders();
    const aborted = new Promise<boolean>((resolve) => response.on('close', () => resolve(!response.writableFinished)));
    answers.push({ response, aborted });
    waiting.shift()?.();
  });
  return {
    server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    /** The answer to the n-th request (from 0), once it has arrived. */
    async answer(index: number) {
      while (answers.length <= index) await new Promise<void>((resolve) => waiting.push(resolve));
      return answers[index]!;
    },
    count: () => answers.length,
  };
}

/** Each message as a chunk event whose raw text is its data; `[DONE]` completes the stream (as OpenAI's does). */
const frames = (): ServerSentEventDecoder<ChatStreamEvent> =>
  new ServerSentEventDecoder<ChatStreamEvent>((message, out) => {
    if (message.data === '[DONE]') return true;
    out.push({ kind: 'chunk', chunk: { id: message.data } as never, raw: message.data });
  });

/** Reads a stream pushed: each batch's raw texts; resolves when it ends (with the failure, if any). */
function readPushed(stream: ChatStream, onBatch: (seen: string[][]) => void = () => undefined) {
  const seen: string[][] = [];
  const outcome = new Promise<unknown>((resolve) => {
    stream.source().start({
      next: (batch) => {
        seen.push(batch.map((event) => event.raw));
        onBatch(seen);
      },
      end: () => resolve(undefined),
      fail: resolve,
    });
  });
  return { seen, outcome };
}

describe('ChatStream (openChatStream)', () => {
  const vendor = streamingVendor();
  let opened = 0;
  // The gateway's own client: its body (read straight from undici's dispatcher) is what every stream reads.
  const http = new HttpClient(5_000);
  const connect = (signal: CallSignal | undefined): Promise<UpstreamResponse> => {
    opened += 1;
    return http.send(vendor.url(), { headers: {}, body: '{}', signal });
  };
  before(() => new Promise<void>((resolve) => vendor.server.listen(0, '127.0.0.1', resolve)));
  after(async () => {
    await http.close();
    vendor.server.closeAllConnections();
    return new Promise<void>((resolve) => vendor.server.close(() => resolve()));
  });

  test('iterates once: a second iteration throws; a body read to its end is not aborted', async () => {
    const stream = await openChatStream(undefined, connect, frames());
    const answer = await vendor.answer(opened - 1);
    answer.response.end('data: a\n\ndata: b\n\n');
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.raw);
    assert.deepEqual(seen, ['a', 'b']);
    assert.throws(() => stream[Symbol.asyncIterator](), /only once/);
    stream.close();
    assert.equal(await answer.aborted, false);
  });

  test('source(): pushes the events of one read of the body together; read so, it cannot be iterated too', async () => {
    const stream = await openChatStream(undefined, connect, frames());
    const answer = await vendor.answer(opened - 1);
    answer.response.write('data: a\n\ndata: b\n\n');
    const { seen, outcome } = readPushed(stream, (batches) => {
      if (batches.length === 1) answer.response.end('data: c\n\n');
    });
    assert.equal(await outcome, undefined);
    assert.deepEqual(seen, [['a', 'b'], ['c']]);
    assert.throws(() => stream[Symbol.asyncIterator](), /only once/);
    assert.equal(await answer.aborted, false);
  });

  test('the end-of-stream marker ends it at once; what the vendor sends after is not seen, and its body is read to the end, not aborted', async () => {
    const stream = await openChatStream(undefined, connect, frames());
    const answer = await vendor.answer(opened - 1);
    answer.response.write('data: a\n\ndata: [DONE]\n\ndata: late\n\n');
    const { seen, outcome } = readPushed(stream);
    assert.equal(await outcome, undefined, 'ended while the vendor had not ended its answer');
    assert.equal(answer.response.writableEnded, false);
    answer.response.end('data: later\n\n');
    assert.equal(await answer.aborted, false);
    assert.deepEqual(seen, [['a']]);
  });

  test('a body that breaks off fails the reader with an UpstreamError; one that breaks off after the marker lost nothing', async () => {
    const broken = await openChatStream(undefined, connect, frames());
    const first = await vendor.answer(opened - 1);
    first.response.write('data: a\n\n');
    const cut = readPushed(broken, () => first.response.destroy());
    const error = await cut.outcome;
    assert.ok(error instanceof UpstreamError, String(error));
    assert.deepEqual(cut.seen, [['a']]);

    const complete = await openChatStream(undefined, connect, frames());
    const second = await vendor.answer(opened - 1);
    second.response.write('data: a\n\ndata: [DONE]\n\n');
    const whole = readPushed(complete, () => second.response.destroy());
    assert.equal(await whole.outcome, undefined);
  });

  test('close() aborts the upstream request at once; closing again is harmless', async () => {
    const stream = await openChatStream(undefined, connect, frames());
    const answer = await vendor.answer(opened - 1);
    stream.close();
    assert.equal(await answer.aborted, true, 'the vendor saw the request dropped');
    stream.close();
  });

  test('breaking out of the loop closes it while the vendor is still sending', async () => {
    const stream = await openChatStream(undefined, connect, frames());
    const answer = await vendor.answer(opened - 1);
    answer.response.write('data: first\n\n');
    for await (const event of stream) {
      assert.equal(event.raw, 'first');
      break;
    }
    assert.equal(await answer.aborted, true);
  });

  // The routes give their streams a CallAbort (lib/call-abort.ts); other callers may pass an AbortController's signal.
  for (const kind of ['AbortController', 'CallAbort'] as const) {
    const controller = (): { signal: CallSignal; abort(): void } => (kind === 'CallAbort' ? new CallAbort() : new AbortController());
    test(`${kind}: the caller's signal aborts the upstream request while it streams; one given already aborted sends nothing`, async () => {
      const caller = controller();
      // The vendor's count, not `opened`: the call given an aborted signal below counts as opened but reaches no vendor.
      const index = vendor.count();
      const stream = await openChatStream(caller.signal, connect, frames());
      const answer = await vendor.answer(index);
      answer.response.write('data: first\n\n');
      const reading = (async () => {
        for await (const event of stream) assert.equal(event.raw, 'first');
      })();
      const outcome = reading.then(() => undefined, (error: unknown) => error);
      caller.abort();
      assert.equal(await answer.aborted, true);
      assert.match(String(await outcome), /aborted/, 'the reader learns the stream was cut');

      const before = vendor.count();
      await assert.rejects(openChatStream(aborted(controller()), connect, frames()), (error: unknown) => error instanceof UpstreamError && /aborted/.test(error.message));
      assert.equal(vendor.count(), before, 'no request reached the vendor');
    });
  }
});

function aborted(controller: { signal: CallSignal; abort(): void }): CallSignal {
  controller.abort();
  return controller.signal;
}
