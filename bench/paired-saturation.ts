// The table measures its targets one after another, minutes apart. On a machine whose speed drifts over minutes (a shared
// virtual machine: here the same load moved 2× between hours with nothing else running) the ratio of two rows then carries
// that drift: one full run read 6.84× Portkey's req/s, a quick run an hour earlier 8.99× and one twenty minutes later 4.33×.
// This phase measures the ratios the goals name so that drift over minutes cannot bend them: Tollgate, the peer and the bare
// proxy (the floor) run side by side, fresh, each warmed up, and are loaded at saturation in rounds, one after another in a
// rotating order; each round gives ratios of targets measured seconds apart, and the median round is reported with the
// spread of the rounds. Each gateway runs as npm start runs it, so Tollgate's idle collector runs in the pauses between its
// runs (the other targets' turns), as it would after any burst. Runs of 3 and of 10 seconds gave the same ratios here.

import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './percentiles.ts';
import { measureSaturation, type SaturationResult } from './saturation.ts';
import type { BenchRequest, SimulatorControl, Target } from './targets.ts';

export interface PairedSaturation {
  rounds: number;
  secondsPerRun: number;
  /** Per target, its runs in round order. */
  runs: Map<Target['name'], SaturationResult[]>;
}

/** Unmeasured load per target before the rounds: JIT tiers, pools, SQLite's first pages. */
const WARMUP_SECONDS = 5;

export async function measurePairedSaturation(
  targets: readonly Target[],
  simulator: SimulatorControl,
  connections: number,
  secondsPerRun: number,
  rounds: number,
  /** The request every run sends (the bench's short chat request by default). */
  request?: BenchRequest,
): Promise<PairedSaturation> {
  await simulator.configure({ latencyMs: 0, chunkDelayMs: 0 });
  const runs = new Map<Target['name'], SaturationResult[]>(targets.map((target) => [target.name, []]));
  for (const target of targets) await measureSaturation(target, connections, WARMUP_SECONDS, request);
  for (let round = 0; round < rounds; round++) {
    // Each target takes each place in the order in turn, so none is always measured first or after the same one.
    const order = targets.map((_, index) => targets[(index + round) % targets.length]!);
    for (const target of order) {
      await sleep(250);
      const result = await measureSaturation(target, connections, secondsPerRun, request);
      if (result.non2xx + result.errors > 0) throw new Error(`paired saturation: ${target.name} answered ${result.non2xx} non-2xx and ${result.errors} failed`);
      runs.get(target.name)!.push(result);
    }
  }
  return { rounds, secondsPerRun, runs };
}

/** Per round, `of`'s figure over `to`'s: the median round and the lowest and highest. */
function roundRatios(paired: PairedSaturation, of: Target['name'], to: Target['name'], figure: (run: SaturationResult) => number): { median: number; low: number; high: number } {
  const a = paired.runs.get(of) ?? [];
  const b = paired.runs.get(to) ?? [];
  const ratios = a.map((run, index) => figure(run) / figure(b[index]!)).sort((x, y) => x - y);
  return { median: median(ratios), low: ratios[0]!, high: ratios.at(-1)! };
}

/** `label`: what the rounds sent, when not the bench's short chat request. */
export function pairedSaturationNotes(paired: PairedSaturation, label?: string): string[] {
  const ratio = (value: { median: number; low: number; high: number }): string => `**${value.median.toFixed(2)}×** (rounds ${value.low.toFixed(2)}–${value.high.toFixed(2)})`;
  const requests = (run: SaturationResult): number => run.requestsPerSecond;
  const cpu = (run: SaturationResult): number => run.cpuMicrosecondsPerRequest;
  const medianOf = (name: Target['name'], figure: (run: SaturationResult) => number): number => median((paired.runs.get(name) ?? []).map(figure));
  const names = [...paired.runs.keys()];
  const figures = names.map((name) => `${name} ${medianOf(name, requests).toFixed(0)} req/s, ${medianOf(name, cpu).toFixed(1)} µs CPU a call`).join('; ');
  const phase = label ? `paired saturation, ${label}` : 'paired saturation';
  const notes = [
    `${phase} (the goals' ratios from targets measured seconds apart, not minutes: ${names.join(', ')} running side by side, loaded in turn in ${paired.rounds} rounds of ${paired.secondsPerRun} s at the table's connections, rotating order; medians): ${figures}`,
  ];
  if (names.includes('portkey')) {
    notes.push(`${phase}, Tollgate against the peer: req/s ${ratio(roundRatios(paired, 'tollgate', 'portkey', requests))}, CPU a call ${ratio(roundRatios(paired, 'tollgate', 'portkey', cpu))}`);
  }
  if (names.includes('bare-proxy')) {
    notes.push(
      `${phase}, Tollgate against the bare proxy: req/s ${ratio(roundRatios(paired, 'tollgate', 'bare-proxy', requests))}, CPU a call ${ratio(roundRatios(paired, 'tollgate', 'bare-proxy', cpu))}` +
        (names.includes('portkey') ? `; the bare proxy against the peer: req/s ${ratio(roundRatios(paired, 'bare-proxy', 'portkey', requests))}` : ''),
    );
  }
  return notes;
}
