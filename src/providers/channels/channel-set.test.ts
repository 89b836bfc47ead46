import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ChannelRecord } from '../../features/catalog/catalog.ts';
import { ChannelHealth } from './channel-health.ts';
import { ChannelSet } from './channel-set.ts';

const channel = (id: string, weight: number, priority = 0, models: string[] | null = null): ChannelRecord => ({ id, baseUrl: `https://${id}.example.com`, apiKey: null, weight, priority, models });
const NOW = 1_000_000;

function picks(set: ChannelSet, count: number, model = 'm', tried = 0): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let index = 0; index < count; index++) {
    const picked = set.pick(model, tried, NOW);
    const id = picked?.id ?? 'none';
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

describe('ChannelSet.pick', () => {
  test('smooth weighted round-robin: exact shares by weight, interleaved, weight 0 never', () => {
    const set = new ChannelSet('p', [channel('a', 5), channel('b', 1), channel('c', 1), channel('z', 0)], () => new ChannelHealth());
    assert.deepEqual(picks(set, 700), { a: 500, b: 100, c: 100 });
    const order = Array.from({ length: 7 }, () => set.pick('m', 0, NOW)!.id).join('');
    assert.equal(order, 'aabacaa', "nginx's interleaving: the heavy channel is spread, not sent in a burst");
  });

  test('the highest priority tier takes everything while it can; the next tier only when it cannot', () => {
    const set = new ChannelSet('p', [channel('low', 10, 0), channel('high', 1, 5)], () => new ChannelHealth());
    assert.deepEqual(picks(set, 10), { high: 10 });
    const high = set.channels.find((candidate) => candidate.id === 'high')!;
    assert.deepEqual(picks(set, 3, 'm', high.bit), { low: 3 }, 'tried in this call: skipped');
    high.health.failed(NOW, true, 60_000);
    assert.deepEqual(picks(set, 3), { low: 3 }, 'cooling: skipped');
  });

  test('channels limited to some models serve only those', () => {
    const set = new ChannelSet('p', [channel('a', 1, 0, ['x']), channel('b', 1, 0, ['y'])], () => new ChannelHealth());
    assert.deepEqual(picks(set, 4, 'x'), { a: 4 });
    assert.deepEqual(picks(set, 4, 'q'), { none: 4 });
  });

  test('pickCooling: the channel back first when every one cools after failures, never one waiting out a retry-after', () => {
    const set = new ChannelSet('p', [channel('a', 1), channel('b', 1), channel('c', 1)], () => new ChannelHealth());
    const [a, b, c] = set.channels;
    for (let index = 0; index < 3; index++) a!.health.failed(NOW, false, undefined);
    for (let index = 0; index < 3; index++) b!.health.failed(NOW - 500, false, undefined);
    c!.health.failed(NOW - 900, true, 10_000);
    assert.equal(set.pick('m', 0, NOW), undefined);
    assert.equal(set.pickCooling('m', 0, NOW)?.id, 'b', 'b cooled first, so it is back first');
    assert.equal(set.pickCooling('m', b!.bit | a!.bit, NOW), undefined, 'c waits for the vendor');
    assert.equal(set.rateLimitedUntil('m', NOW), undefined, 'not every channel is rate-limited');
  });

  test('rateLimitedUntil: the soonest end when every channel waits out a retry-after', () => {
    const set = new ChannelSet('p', [channel('a', 1), channel('b', 1)], () => new ChannelHealth());
    set.channels[0]!.health.failed(NOW, true, 20_000);
    set.channels[1]!.health.failed(NOW, true, 45_000);
    assert.equal(set.rateLimitedUntil('m', NOW), NOW + 20_000);
  });
});
