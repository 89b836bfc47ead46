// `node --import tsx bench/channel-pick.ts` (also a note of `npm run bench`): CPU per channel pick (DESIGN §13, issue 15:
// ≤ 2 µs). Times what routing adds to one request besides the I/O: the per-request route object, the weighted pick, and
// the health updates of the attempt (chosen, answered with its latency). A micro loop, so a figure to read, not a test.

import { fileURLToPath } from 'node:url';
import type { ChannelRecord } from '../src/features/catalog/catalog.ts';
import { ChannelHealth } from '../src/providers/channels/channel-health.ts';
import { ChannelSet } from '../src/providers/channels/channel-set.ts';
import { UpstreamRoute } from '../src/providers/channels/upstream-route.ts';

export interface ChannelPickScenario {
  name: string;
  /** Nanoseconds per request's routing (median of rounds). */
  nsPerPick: number;
}

const channel = (id: string, weight: number, priority = 0, models: string[] | null = null): ChannelRecord => ({ id, baseUrl: `https://${id}.example.com/v1`, apiKey: `sk-${id}`, weight, priority, models });

function measure(name: string, records: ChannelRecord[], prepare: (set: ChannelSet) => void = () => undefined, iterations = 1_000_000, rounds = 7): ChannelPickScenario {
  const set = new ChannelSet('bench', records, () => new ChannelHealth());
  prepare(set);
  const now = Date.now();
  const samples: number[] = [];
  let sink = 0;
  for (let round = 0; round < rounds; round++) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < iterations; index++) {
      const route = new UpstreamRoute('gpt-4o-mini');
      const picked = set.pick(route.model, 0, now);
      if (picked === undefined) continue;
      picked.health.chosen();
      route.attempts += 1;
      route.channel = picked.id;
      picked.health.succeeded(12.5);
      sink += route.attempts;
    }
    samples.push(Number(process.hrtime.bigint() - started) / iterations);
  }
  if (sink === 0) throw new Error('nothing was picked');
  samples.sort((a, b) => a - b);
  return { name, nsPerPick: Math.round(samples[Math.floor(samples.length / 2)]! * 10) / 10 };
}

/** The scenarios: one channel, three weighted, and eight in two tiers with the top tier partly cooling and model-limited. */
export function measureChannelPick(): ChannelPickScenario[] {
  return [
    measure('1 channel', [channel('only', 1)]),
    measure('3 channels, weights 3:1:0', [channel('a', 3), channel('b', 1), channel('c', 0)]),
    measure(
      '8 channels in 2 tiers, 2 of the top tier cooling, 1 limited to another model',
      [channel('t1', 5, 10), channel('t2', 3, 10), channel('t3', 2, 10), channel('t4', 1, 10, ['claude-sonnet-4-5']), channel('b1', 1), channel('b2', 1), channel('b3', 1), channel('b4', 1)],
      (set) => {
        const now = Date.now();
        for (const id of ['t1', 't2']) set.channels.find((candidate) => candidate.id === id)!.health.failed(now, true, 3_600_000);
      },
    ),
  ];
}

export function channelPickNote(scenarios: readonly ChannelPickScenario[]): string {
  return `channel pick (route object, weighted pick, health updates; median of 7 × 1M): ${scenarios.map((scenario) => `${scenario.nsPerPick} ns with ${scenario.name}`).join('; ')}`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(channelPickNote(measureChannelPick()));
