import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setImmediate } from 'node:timers/promises';
import type { PushSource, Sink } from '../../lib/push-stream.ts';
import { relayStream, type RelayDialect } from './stream-relay.ts';

/** A dialect over plain strings: `stop` ends the stream after its frame, `bad` throws, `drop` is not sent. */
function dialect(): RelayDialect<string> & { framed: string[]; charges: number } {
  return {
    framed: [],
    charges: 0,
    frame(event) {
      if (event === 'bad') throw new Error('a frame no rule can read');
      this.framed.push(event);
      return event === 'drop' ? undefined : `[${event}]`;
    },
    ends: (event) => event === 'stop',
    finished: () => '[done]',
    charge() {
      this.charges += 1;
    },
  };
}

/** A source the test pushes by hand: `sink` once started; counts closes and pauses. */
function source() {
  const state = {
    sink: undefined as Sink<readonly string[]> | undefined,
    closed: 0,
    paused: false,
    start(sink: Sink<readonly string[]>) {
      state.sink = sink;
    },
    pause() {
      state.paused = true;
    },
    resume() {
      state.paused = false;
    },
    close() {
      state.closed += 1;
      return Promise.resolve();
    },
  } satisfies PushSource<readonly string[]> & Record<string, unknown>;
  return state;
}

/** What reached the client's side of a relay: each text, then how it ended (`ended` resolves with the failure, if any). */
function client(relay: PushSource<string>) {
  const sent: string[] = [];
  let outcome: { error?: unknown } | undefined;
  let settle!: () => void;
  const ended = new Promise<void>((resolve) => (settle = resolve));
  relay.start({
    next: (text) => sent.push(text),
    end: () => {
      outcome = {};
      settle();
    },
    fail: (error) => {
      outcome = { error };
      settle();
    },
  });
  return { sent, ended: ended.then(() => outcome!), settled: () => outcome !== undefined };
}

test('relayStream: a batch goes out as one string of its frames, dropped events left out; the finished frame last; charged once', async () => {
  const rules = dialect();
  const upstream = source();
  const seen = client(relayStream(upstream, rules));
  upstream.sink!.next(['a', 'b', 'drop']);
  upstream.sink!.next(['drop']);
  upstream.sink!.next(['c']);
  assert.deepEqual(seen.sent, ['[a][b]', '[c]'], 'each batch is sent in the call that brought it');
  upstream.sink!.end();
  assert.deepEqual(await seen.ended, {});
  assert.deepEqual(seen.sent, ['[a][b]', '[c]', '[done]']);
  assert.equal(upstream.closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: an event that ends the stream is sent with what came before it in its batch, and nothing after it', async () => {
  const rules = dialect();
  const upstream = source();
  const seen = client(relayStream(upstream, rules));
  upstream.sink!.next(['a', 'stop', 'b']);
  upstream.sink!.next(['c']);
  upstream.sink!.end();
  assert.deepEqual(await seen.ended, {});
  assert.deepEqual(seen.sent, ['[a][stop]'], 'no finished frame after a stream the vendor ended with an error');
  assert.deepEqual(rules.framed, ['a', 'stop']);
  assert.equal(upstream.closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: frames made before a rule throws are sent, then the error; closed and charged once', async () => {
  const rules = dialect();
  const upstream = source();
  const seen = client(relayStream(upstream, rules));
  upstream.sink!.next(['a']);
  upstream.sink!.next(['b', 'bad', 'c']);
  const { error } = await seen.ended;
  assert.deepEqual(seen.sent, ['[a]', '[b]']);
  assert.match(String(error), /no rule can read/);
  assert.equal(upstream.closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: a vendor connection lost fails the client with its error; closed and charged once', async () => {
  const rules = dialect();
  const upstream = source();
  const seen = client(relayStream(upstream, rules));
  upstream.sink!.next(['a']);
  upstream.sink!.fail(new Error('connection reset'));
  const { error } = await seen.ended;
  assert.match(String(error), /connection reset/);
  assert.deepEqual(seen.sent, ['[a]']);
  assert.equal(upstream.closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: a client gone between batches closes the upstream and charges once; the client side hears nothing more', async () => {
  const rules = dialect();
  const upstream = source();
  const relay = relayStream(upstream, rules);
  const seen = client(relay);
  upstream.sink!.next(['a', 'b']);
  await relay.close();
  await relay.close();
  upstream.sink!.next(['c']);
  upstream.sink!.end();
  await setImmediate();
  assert.deepEqual(seen.sent, ['[a][b]']);
  assert.equal(seen.settled(), false);
  assert.equal(upstream.closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: back-pressure reaches the upstream (pause, resume)', () => {
  const upstream = source();
  const relay = relayStream(upstream, dialect());
  client(relay);
  relay.pause();
  assert.equal(upstream.paused, true);
  relay.resume();
  assert.equal(upstream.paused, false);
});

test('relayStream: `after` runs once the charge is booked, and the client hears the end only when it is done', async () => {
  const rules = dialect();
  const upstream = source();
  let release!: () => void;
  let chargesSeenByAfter = -1;
  const relay = relayStream(upstream, rules, () => {
    chargesSeenByAfter = rules.charges;
    return new Promise<void>((resolve) => (release = resolve));
  });
  const seen = client(relay);
  upstream.sink!.end();
  await setImmediate();
  assert.equal(chargesSeenByAfter, 1);
  assert.equal(seen.settled(), false, 'the end waits for what is stored after the charge');
  release();
  assert.deepEqual(await seen.ended, {});
  assert.deepEqual(seen.sent, ['[done]']);
});

test('relayStream: a charge that throws fails a stream that would have ended well', async () => {
  const rules = dialect();
  rules.charge = () => {
    throw new Error('ledger unavailable');
  };
  const upstream = source();
  const seen = client(relayStream(upstream, rules));
  upstream.sink!.end();
  const { error } = await seen.ended;
  assert.match(String(error), /ledger unavailable/);
});
