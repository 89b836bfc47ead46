// What one Node proxy hop adds at concurrency 1 on this machine, measured in the same run as the table: a bare proxy
// (bench/bare-proxy.ts: node:http + undici, nothing else) against "direct", in alternating rounds so the machine's drift
// falls on both. Issue 16's "added latency p99 ≤ 0.25 ms" reads against this floor: the part of the gateway's added latency
// above it is the gateway's own work.

import type { BenchPlan } from './bench-plan.ts';
import { childEnvironment, freePort, startChild, stopChild, waitUntilAnswering } from './child-processes.ts';
import { measureRoundTrips } from './one-connection.ts';
import { median } from './percentiles.ts';
import { directTarget, type SimulatorControl, type Target } from './targets.ts';

export interface LatencyFloor {
  rounds: number;
  /** Per round: the bare proxy's round-trip p50/p99 minus direct's in the same round, milliseconds. */
  addedP50: number[];
  addedP99: number[];
  /** Direct's p99 per round (the baseline each difference is taken from). */
  directP99: number[];
}

export async function measureLatencyFloor(root: string, simulator: SimulatorControl, plan: BenchPlan, rounds: number): Promise<LatencyFloor> {
  const port = await freePort();
  const child = startChild('bare-proxy', ['--import', 'tsx', 'bench/bare-proxy.ts'], childEnvironment({ BARE_PROXY_PORT: String(port), BARE_PROXY_UPSTREAM: simulator.origin }), root);
  try {
    const origin = `http://127.0.0.1:${port}`;
    // The simulator's health check, passed through the proxy, answers once the proxy listens.
    await waitUntilAnswering(child, `${origin}/_sim/health`);
    const direct = directTarget(simulator);
    const bare: Target = { ...direct, name: 'bare-proxy', origin, pid: child.pid };
    const floor: LatencyFloor = { rounds, addedP50: [], addedP99: [], directP99: [] };
    for (let round = 0; round < rounds; round++) {
      const base = await measureRoundTrips(direct, plan.roundTripWarmup, plan.roundTripRequests);
      const hop = await measureRoundTrips(bare, plan.roundTripWarmup, plan.roundTripRequests);
      if (base.errors + hop.errors > 0) throw new Error(`latency floor: ${base.errors} direct and ${hop.errors} proxied requests failed`);
      floor.addedP50.push(hop.latency.p50 - base.latency.p50);
      floor.addedP99.push(hop.latency.p99 - base.latency.p99);
      floor.directP99.push(base.latency.p99);
    }
    return floor;
  } finally {
    await stopChild(child);
  }
}

export function latencyFloorNote(floor: LatencyFloor, tollgateAddedP99: number | undefined): string {
  const ms = (value: number): string => value.toFixed(3);
  const range = (values: readonly number[]): string =>
    values.length === 1 ? ms(values[0]!) : `${ms(Math.min(...values))}–${ms(Math.max(...values))}`;
  const rounds = floor.rounds === 1 ? 'one round after direct' : `${floor.rounds} rounds alternating with direct`;
  return (
    `latency floor of one Node proxy hop (bench/bare-proxy.ts: node:http + undici, no key check, billing or log; ${rounds}): ` +
    `added p50 ${ms(median(floor.addedP50))} ms, **added p99 ${ms(median(floor.addedP99))} ms** (${floor.rounds === 1 ? 'direct' : `rounds ${range(floor.addedP99)}; direct`} p99 ${range(floor.directP99)})` +
    (tollgateAddedP99 === undefined ? '' : `; Tollgate's added p99 above is ${ms(tollgateAddedP99)} ms, ${ms(tollgateAddedP99 - median(floor.addedP99))} ms over the floor`)
  );
}
