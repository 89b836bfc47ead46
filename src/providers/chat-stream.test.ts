import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import type { ChatStreamEvent } from '../core/chat-types.ts';
import type { UpstreamResponse } from './http-client.ts';
import { openChatStream } from './chat-stream.ts';
import { readServerSentEvents } from './sse-reader.ts';

/** A vendor's streaming answer whose body stays open until the test ends it; records whether the request was aborted. */
function fakeUpstream(): { connect: (signal: AbortSignal) => Promise<UpstreamResponse>; body: PassThrough; aborted: () => boolean } {
  const body = new PassThrough();
  let signal: AbortSignal | undefined;
  return {
    body,
    aborted: () => signal?.aborted === true,
    connect: async (given) => {
      signal = given;
      return { status: 200, headers: {}, body: body as unknown as UpstreamResponse['body'] };
    },
  };
}

async function* frames(body: UpstreamResponse['body']): AsyncGenerator<ChatStreamEvent> {
  for await (const message of readServerSentEvents(body)) yield { kind: 'chunk', chunk: { id: message.data } as never, raw: message.data };
}

describe('ChatStream (openChatStream)', () => {
  test('iterates once: a second iteration throws', async () => {
    const upstream = fakeUpstream();
    const stream = await openChatStream(undefined, upstream.connect, frames);
    upstream.body.end('data: a\n\ndata: b\n\n');
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.raw);
    assert.deepEqual(seen, ['a', 'b']);
    assert.throws(() => stream[Symbol.asyncIterator](), /only once/);
  });

  test('close() aborts the upstream request and destroys the body at once; closing again is harmless', async () => {
    const upstream = fakeUpstream();
    const stream = await openChatStream(undefined, upstream.connect, frames);
    stream.close();
    assert.equal(upstream.aborted(), true);
    assert.equal(upstream.body.destroyed, true);
    stream.close();
  });

  test('breaking out of the loop closes it while the vendor is still sending', async () => {
    const upstream = fakeUpstream();
    const stream = await openChatStream(undefined, upstream.connect, frames);
    upstream.body.write('data: first\n\n');
    for await (const event of stream) {
      assert.equal(event.raw, 'first');
      break;
    }
    assert.equal(upstream.aborted(), true);
    assert.equal(upstream.body.destroyed, true);
  });

  test("the caller's signal aborts the upstream request, also one given already aborted", async () => {
    const caller = new AbortController();
    const upstream = fakeUpstream();
    await openChatStream(caller.signal, upstream.connect, frames);
    assert.equal(upstream.aborted(), false);
    caller.abort();
    assert.equal(upstream.aborted(), true);

    const late = fakeUpstream();
    await openChatStream(AbortSignal.abort(), late.connect, frames);
    assert.equal(late.aborted(), true);
  });
});
