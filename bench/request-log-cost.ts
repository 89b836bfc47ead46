// The request log's cost on the hot path (DESIGN §13: ≤ 5 % fewer req/s with it on). Two gateways, one with the log on and
// one with it off, both idle but for the one under load; saturation runs alternate between them (on, off, off, on, …) so
// the shared machine's drift falls on both alike, and the median of each side is compared. CPU per request is read too:
// it is the steadier figure on a noisy machine.

import { setTimeout as sleep } from 'node:timers/promises';
import { measureSaturation, type SaturationResult } from './saturation.ts';
import type { SimulatorControl, Target } from './targets.ts';

export interface RequestLogCost {
  rounds: number;
  secondsPerRun: number;
  on: { requestsPerSecond: number; cpuMicrosecondsPerRequest: number };
  off: { requestsPerSecond: number; cpuMicrosecondsPerRequest: number };
  /** Percent fewer req/s with the log on: the median over adjacent on/off pairs (each pair shares the machine's moment). */
  lossPercent: number;
  /** The pairs' losses, lowest to highest: their spread is the run's noise. */
  pairLosses: number[];
  /** Percent more CPU per request with the log on (median over the pairs). */
  cpuPercent: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** How many percent `value` is below `base`. */
const percentFewer = (value: number, base: number): number => (base > 0 ? ((base - value) / base) * 100 : 0);
/** How many percent `larger` is above `base`. */
const percentMore = (larger: number, base: number): number => (base > 0 ? ((larger - base) / base) * 100 : 0);

export async function measureRequestLogCost(
  start: (requestLog: boolean) => Promise<Target>,
  simulator: SimulatorControl,
  connections: number,
  secondsPerRun: number,
  rounds: number,
): Promise<RequestLogCost> {
  await simulator.configure({ latencyMs: 0, chunkDelayMs: 0 });
  const on = await start(true);
  const off = await start(false);
  try {
    // One unmeasured run each: JIT warm-up, connection pools, SQLite's first pages.
    await measureSaturation(on, connections, 1);
    await measureSaturation(off, connections, 1);
    const results: { on: SaturationResult[]; off: SaturationResult[] } = { on: [], off: [] };
    for (let round = 0; round < rounds; round++) {
      // ABBA order inside each pair of rounds, so neither side always runs first.
      const order = round % 2 === 0 ? [on, off] : [off, on];
      for (const target of order) {
        await sleep(250);
        (target === on ? results.on : results.off).push(await measureSaturation(target, connections, secondsPerRun));
      }
    }
    const side = (runs: SaturationResult[]) => ({
      requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
      cpuMicrosecondsPerRequest: median(runs.map((run) => run.cpuMicrosecondsPerRequest)),
    });
    const pairLosses = results.on.map((run, index) => percentFewer(run.requestsPerSecond, results.off[index]!.requestsPerSecond)).sort((a, b) => a - b);
    const pairCpu = results.on.map((run, index) => percentMore(run.cpuMicrosecondsPerRequest, results.off[index]!.cpuMicrosecondsPerRequest));
    return { rounds, secondsPerRun, on: side(results.on), off: side(results.off), lossPercent: median(pairLosses), pairLosses, cpuPercent: median(pairCpu) };
  } finally {
    await on.stop();
    await off.stop();
  }
}
