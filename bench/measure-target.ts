// Every measurement of one target, in order, while no other target is under load. The simulator's run-time options are
// changed only for the phase that needs them and restored afterwards.

import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_OPTIONS } from '../simulator/server.ts';
import type { BenchPlan } from './bench-plan.ts';
import { measureConcurrentStreams, type StreamsResult } from './concurrent-streams.ts';
import { measureFirstToken, measureRoundTrips, type FirstTokenResult, type RoundTripResult } from './one-connection.ts';
import { measureSustainedRate, type SustainedResult } from './paced-rate.ts';
import { PeakResidentSampler, residentBytes } from './process-stats.ts';
import { measureSaturation, type SaturationResult } from './saturation.ts';
import type { SimulatorControl, Target } from './targets.ts';

export interface MemoryResult {
  /** Bytes of VmRSS before any load. */
  idle: number;
  /** Highest VmRSS sampled while the target was under load. */
  peak: number;
  /** VmRSS after the settle time that follows the last load; undefined where not measured (the simulator keeps serving). */
  after: number | undefined;
}

export interface TargetReport {
  name: Target['name'];
  roundTrip: RoundTripResult;
  saturation: SaturationResult;
  sustained: SustainedResult;
  firstToken: FirstTokenResult;
  streams: StreamsResult;
  memory: MemoryResult;
}

const log = (line: string): void => console.error(line);
const ms = (value: number): string => `${value.toFixed(3)} ms`;

async function withSimulatorOptions<T>(simulator: SimulatorControl, options: Record<string, number>, reset: Record<string, number>, run: () => Promise<T>): Promise<T> {
  await simulator.configure(options);
  try {
    return await run();
  } finally {
    await simulator.configure(reset);
  }
}

export async function measureTarget(target: Target, simulator: SimulatorControl, plan: BenchPlan): Promise<TargetReport> {
  const idle = residentBytes(target.pid);
  const sampler = new PeakResidentSampler(target.pid, plan.rssSampleMs);
  sampler.start();
  log(`[${target.name}] RSS idle ${(idle / 2 ** 20).toFixed(1)} MB`);

  const roundTrip = await measureRoundTrips(target, plan.roundTripWarmup, plan.roundTripRequests);
  log(`[${target.name}] concurrency 1: p50 ${ms(roundTrip.latency.p50)}, p99 ${ms(roundTrip.latency.p99)}, errors ${roundTrip.errors}`);

  const saturation = await measureSaturation(target, plan.saturationConnections, plan.saturationSeconds);
  log(
    `[${target.name}] ${plan.saturationConnections} connections: ${saturation.requestsPerSecond.toFixed(0)} req/s, p50 ${saturation.p50Ms} ms, ` +
      `p99 ${saturation.p99Ms} ms, non-2xx ${saturation.non2xx}, errors ${saturation.errors}, ${saturation.cpuMicrosecondsPerRequest.toFixed(0)} µs CPU/request`,
  );

  const sustained = await withSimulatorOptions(simulator, { latencyMs: plan.sustainedUpstreamMs }, { latencyMs: 0 }, () =>
    measureSustainedRate(target, { rates: plan.rateSteps, stepSeconds: plan.rateStepSeconds, warmupSeconds: plan.rateWarmupSeconds }, (step) =>
      log(
        `[${target.name}] paced ${step.offered} req/s (upstream ${plan.sustainedUpstreamMs} ms): p50 ${ms(step.latency.p50)}, p99 ${ms(step.latency.p99)}, ` +
          `errors ${step.errors}, scheduler lag ≤ ${step.schedulerLagMs.toFixed(1)} ms → ${step.passed ? 'pass' : 'fail'}`,
      ),
    ),
  );

  const firstToken = await withSimulatorOptions(simulator, { streamChunks: plan.streamChunks, chunkDelayMs: 0 }, {}, () =>
    measureFirstToken(target, plan.firstTokenWarmup, plan.firstTokenStreams),
  );
  log(`[${target.name}] first token: p50 ${ms(firstToken.firstToken.p50)}, p99 ${ms(firstToken.firstToken.p99)}, errors ${firstToken.errors}, incomplete ${firstToken.incomplete}`);

  // The simulator splits its reply into at most one chunk a character, and its reply is ~4 bytes a token: a reply long
  // enough for every held chunk (the default 16 tokens, ~64 characters, capped 80 chunks at ~64).
  const held = { chunkDelayMs: plan.streamChunkDelayMs, streamChunks: plan.streamHeldChunks, replyTokens: Math.ceil(plan.streamHeldChunks / 3) };
  const afterwards = { chunkDelayMs: 0, streamChunks: plan.streamChunks, replyTokens: DEFAULT_OPTIONS.replyTokens };
  const streams = await withSimulatorOptions(simulator, held, afterwards, () =>
    measureConcurrentStreams(target, plan.streamSteps, plan.rssSampleMs, (step) =>
      log(
        `[${target.name}] ${step.streams} streams at once: ${step.peakOpen} open together, errors ${step.errors}, incomplete ${step.incomplete}, ` +
          `RSS peak ${(step.rssPeak / 2 ** 20).toFixed(1)} MB, ${step.seconds.toFixed(1)} s → ${step.passed ? 'pass' : 'fail'}`,
      ),
    ),
  );

  const peak = sampler.stop();
  let after: number | undefined;
  if (target.name !== 'direct') {
    log(`[${target.name}] waiting ${plan.rssSettleSeconds} s for RSS after the load`);
    await sleep(plan.rssSettleSeconds * 1000);
    after = residentBytes(target.pid);
  }
  log(`[${target.name}] RSS peak ${(peak / 2 ** 20).toFixed(1)} MB, after ${after === undefined ? '—' : `${(after / 2 ** 20).toFixed(1)} MB`}`);
  return { name: target.name, roundTrip, saturation, sustained, firstToken, streams, memory: { idle, peak, after } };
}
