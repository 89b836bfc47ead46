// The floor under the gateway's figures: one Node proxy hop with nothing else in it (bench/bare-proxy.ts: node:http +
// undici), measured in the same run as the table. At concurrency 1 against "direct", in alternating rounds so the machine's
// drift falls on both: issue 16's "added latency p99 ≤ 0.25 ms" reads against what any Node proxy adds at that moment. At
// saturation, with the table's connections and seconds: "≥ 10× Portkey's req/s" and "≤ 60 µs of CPU a call" read against
// what a proxy that does no work of its own reaches on this machine. What the gateway adds above either floor is its own work.

import type { BenchPlan } from './bench-plan.ts';
import { childEnvironment, freePort, startChild, stopChild, waitUntilAnswering } from './child-processes.ts';
import { measureRoundTrips } from './one-connection.ts';
import { median } from './percentiles.ts';
import { measureSaturation, type SaturationResult } from './saturation.ts';
import { directTarget, npmStartNode, type SimulatorControl, type Target } from './targets.ts';

/** Unmeasured load before the bare proxy's saturation run, as the table's targets get from their earlier phases. */
const SATURATION_WARMUP_SECONDS = 2;

export interface ProxyFloor {
  rounds: number;
  /** Per round: the bare proxy's round-trip p50/p99 minus direct's in the same round, milliseconds. */
  addedP50: number[];
  addedP99: number[];
  /** Direct's p99 per round (the baseline each difference is taken from). */
  directP99: number[];
  /** The bare proxy at the table's saturation connections and seconds. */
  saturation: SaturationResult;
}

/** The bare proxy (bench/bare-proxy.ts) started in front of the simulator, with npm start's node flags. */
export async function startBareProxy(root: string, simulator: SimulatorControl): Promise<Target> {
  const port = await freePort();
  // npm start's node flags (young generation size, allocator arenas), so the floor's collector works as the gateway's does.
  const asStarted = npmStartNode(root);
  const environment = { ...childEnvironment({ BARE_PROXY_PORT: String(port), BARE_PROXY_UPSTREAM: simulator.origin }), ...asStarted.environment };
  const child = startChild('bare-proxy', [...asStarted.flags, '--import', 'tsx', 'bench/bare-proxy.ts'], environment, root);
  const stop = (): Promise<void> => stopChild(child);
  const origin = `http://127.0.0.1:${port}`;
  try {
    // The simulator's health check, passed through the proxy, answers once the proxy listens.
    await waitUntilAnswering(child, `${origin}/_sim/health`);
  } catch (error) {
    await stop();
    throw error;
  }
  return { ...directTarget(simulator), name: 'bare-proxy', origin, pid: child.pid, stop };
}

export async function measureProxyFloor(root: string, simulator: SimulatorControl, plan: BenchPlan): Promise<ProxyFloor> {
  const rounds = plan.latencyFloorRounds;
  const bare = await startBareProxy(root, simulator);
  try {
    const direct = directTarget(simulator);
    const addedP50: number[] = [];
    const addedP99: number[] = [];
    const directP99: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const base = await measureRoundTrips(direct, plan.roundTripWarmup, plan.roundTripRequests);
      const hop = await measureRoundTrips(bare, plan.roundTripWarmup, plan.roundTripRequests);
      if (base.errors + hop.errors > 0) throw new Error(`proxy floor: ${base.errors} direct and ${hop.errors} proxied requests failed`);
      addedP50.push(hop.latency.p50 - base.latency.p50);
      addedP99.push(hop.latency.p99 - base.latency.p99);
      directP99.push(base.latency.p99);
    }
    await measureSaturation(bare, plan.saturationConnections, SATURATION_WARMUP_SECONDS);
    const saturation = await measureSaturation(bare, plan.saturationConnections, plan.saturationSeconds);
    if (saturation.non2xx + saturation.errors > 0) throw new Error(`proxy floor: ${saturation.non2xx} non-2xx and ${saturation.errors} failed at saturation`);
    return { rounds, addedP50, addedP99, directP99, saturation };
  } finally {
    await bare.stop();
  }
}

/** What the table's gateways reached at saturation, to set beside the floor's. */
export interface SaturationFigures {
  tollgate: SaturationResult | undefined;
  peer: SaturationResult | undefined;
}

export function proxyFloorNotes(floor: ProxyFloor, tollgateAddedP99: number | undefined, figures: SaturationFigures): string[] {
  const ms = (value: number): string => value.toFixed(3);
  const range = (values: readonly number[]): string =>
    values.length === 1 ? ms(values[0]!) : `${ms(Math.min(...values))}–${ms(Math.max(...values))}`;
  const rounds = floor.rounds === 1 ? 'one round after direct' : `${floor.rounds} rounds alternating with direct`;
  const hop = 'one Node proxy hop (bench/bare-proxy.ts: node:http + undici, no key check, billing or log';
  const latency =
    `latency floor of ${hop}; ${rounds}): ` +
    `added p50 ${ms(median(floor.addedP50))} ms, **added p99 ${ms(median(floor.addedP99))} ms** (${floor.rounds === 1 ? 'direct' : `rounds ${range(floor.addedP99)}; direct`} p99 ${range(floor.directP99)})` +
    (tollgateAddedP99 === undefined ? '' : `; Tollgate's added p99 above is ${ms(tollgateAddedP99)} ms, ${ms(tollgateAddedP99 - median(floor.addedP99))} ms over the floor`);
  const { saturation } = floor;
  const { tollgate, peer } = figures;
  const throughput =
    `throughput floor of ${hop}; measured after the table, ${saturation.completed.toLocaleString('en-US')} calls): ` +
    `**${saturation.requestsPerSecond.toFixed(0)} req/s, ${saturation.cpuMicrosecondsPerRequest.toFixed(1)} µs of CPU a call**` +
    (peer ? ` (${(saturation.requestsPerSecond / peer.requestsPerSecond).toFixed(2)}× the peer's req/s in the table)` : '') +
    (tollgate
      ? `; Tollgate in the table: ${(tollgate.requestsPerSecond / saturation.requestsPerSecond).toFixed(2)}× the floor's req/s, ` +
        `${(tollgate.cpuMicrosecondsPerRequest - saturation.cpuMicrosecondsPerRequest).toFixed(1)} µs of CPU a call over it`
      : '');
  return [latency, throughput];
}
