import assert from 'node:assert/strict';
import { test } from 'node:test';
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

async function* batches(...list: string[][]): AsyncGenerator<string[]> {
  for (const batch of list) yield batch;
}

async function relayed(source: AsyncIterable<string[]>, rules: RelayDialect<string>): Promise<{ sent: string[]; error?: unknown; closed: number }> {
  const sent: string[] = [];
  let closed = 0;
  try {
    for await (const text of relayStream(source, () => (closed += 1), rules)) sent.push(text);
  } catch (error) {
    return { sent, error, closed };
  }
  return { sent, closed };
}

test('relayStream: a batch goes out as one string of its frames, dropped events left out; the finished frame last; charged once', async () => {
  const rules = dialect();
  const { sent, closed } = await relayed(batches(['a', 'b', 'drop'], ['drop'], ['c']), rules);
  assert.deepEqual(sent, ['[a][b]', '[c]', '[done]']);
  assert.equal(closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: an event that ends the stream is sent with what came before it in its batch, and nothing after it is read', async () => {
  const rules = dialect();
  const { sent } = await relayed(batches(['a', 'stop', 'b'], ['c']), rules);
  assert.deepEqual(sent, ['[a][stop]']);
  assert.deepEqual(rules.framed, ['a', 'stop']);
  assert.equal(rules.charges, 1);
});

test('relayStream: frames made before a rule throws are sent, then the error; closed and charged once', async () => {
  const rules = dialect();
  const { sent, error, closed } = await relayed(batches(['a'], ['b', 'bad', 'c']), rules);
  assert.deepEqual(sent, ['[a]', '[b]']);
  assert.match(String(error), /no rule can read/);
  assert.equal(closed, 1);
  assert.equal(rules.charges, 1);
});

test('relayStream: a client gone between batches closes the upstream and charges once, reading no further batch', async () => {
  const rules = dialect();
  let read = 0;
  async function* counted(): AsyncGenerator<string[]> {
    for (const batch of [['a', 'b'], ['c'], ['d']]) {
      read += 1;
      yield batch;
    }
  }
  let closed = 0;
  const relay = relayStream(counted(), () => (closed += 1), rules);
  assert.deepEqual(await relay.next(), { done: false, value: '[a][b]' });
  await relay.return(undefined);
  assert.equal(read, 1);
  assert.equal(closed, 1);
  assert.equal(rules.charges, 1);
});
