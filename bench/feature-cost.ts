// What one feature of the gateway costs on the hot path (DESIGN §13: the request log ≤ 5 % fewer req/s with it on; issue 16:
// the key's limits and the channels too). Each round starts two fresh gateways, one with the feature on and one with it off
// (everything else on in both), and alternates saturation runs between them (on, off or off, on), so the shared machine's
// drift falls on both alike; the median of the rounds' losses is reported. Fresh processes per round, started in
// alternating order: two long-lived processes showed a steady bias of about 4 % between them with the log off in both
// (an A/A run), more than the bound itself. CPU per request is read too.

import { setTimeout as sleep } from 'node:timers/promises';
import { median } from './percentiles.ts';
import { measureSaturation, type SaturationResult } from './saturation.ts';
import type { BenchRequest, SimulatorControl, Target } from './targets.ts';

export interface FeatureCost {
  rounds: number;
  secondsPerRun: number;
  on: { requestsPerSecond: number; cpuMicrosecondsPerRequest: number };
  off: { requestsPerSecond: number; cpuMicrosecondsPerRequest: number };
  /** Percent fewer req/s with the feature on: the median over adjacent on/off pairs (each pair shares the machine's moment). */
  lossPercent: number;
  /** The pairs' losses, lowest to highest: their spread is the run's noise. */
  pairLosses: number[];
  /** Percent more CPU per request with the feature on (median over the pairs). */
  cpuPercent: number;
}

/** How many percent `value` is below `base`. */
const percentFewer = (value: number, base: number): number => (base > 0 ? ((base - value) / base) * 100 : 0);
/** How many percent `larger` is above `base`. */
const percentMore = (larger: number, base: number): number => (base > 0 ? ((larger - base) / base) * 100 : 0);

export async function measureFeatureCost(
  start: (on: boolean) => Promise<Target>,
  simulator: SimulatorControl,
  connections: number,
  secondsPerRun: number,
  rounds: number,
  /** What every run sends (the bench's short chat request by default). */
  request?: BenchRequest,
): Promise<FeatureCost> {
  await simulator.configure({ latencyMs: 0, chunkDelayMs: 0 });
  const results: { on: SaturationResult[]; off: SaturationResult[] } = { on: [], off: [] };
  for (let round = 0; round < rounds; round++) {
    // Which one starts first and which one is measured first alternate: neither side always has the same place.
    const onFirst = round % 2 === 0;
    const first = await start(onFirst);
    const second = await start(!onFirst);
    const [on, off] = onFirst ? [first, second] : [second, first];
    try {
      // One unmeasured second each: JIT warm-up, connection pools, SQLite's first pages.
      await measureSaturation(on, connections, 1, request);
      await measureSaturation(off, connections, 1, request);
      for (const target of Math.floor(round / 2) % 2 === 0 ? [on, off] : [off, on]) {
        await sleep(250);
        (target === on ? results.on : results.off).push(await measureSaturation(target, connections, secondsPerRun, request));
      }
    } finally {
      await first.stop();
      await second.stop();
    }
  }
  const side = (runs: SaturationResult[]) => ({
    requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
    cpuMicrosecondsPerRequest: median(runs.map((run) => run.cpuMicrosecondsPerRequest)),
  });
  const pairLosses = results.on.map((run, index) => percentFewer(run.requestsPerSecond, results.off[index]!.requestsPerSecond)).sort((a, b) => a - b);
  const pairCpu = results.on.map((run, index) => percentMore(run.cpuMicrosecondsPerRequest, results.off[index]!.cpuMicrosecondsPerRequest));
  return { rounds, secondsPerRun, on: side(results.on), off: side(results.off), lossPercent: median(pairLosses), pairLosses, cpuPercent: median(pairCpu) };
}
