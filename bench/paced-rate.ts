// The highest request rate a target sustains with a slow upstream: requests are paced by a fixed-interval scheduler (every
// due request fired each millisecond tick, never per-second bursts), over a pool large enough for the requests in flight.
// Latency counts from the request's scheduled time, so a generator or gateway falling behind shows in the tail instead of
// silently lowering the offered rate.

import { Pool } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { distribution, type Distribution } from './percentiles.ts';
import { CHAT_BODY, CHAT_PATH, type Target } from './targets.ts';

export interface RateStep {
  /** Offered requests per second. */
  offered: number;
  sent: number;
  /** Milliseconds from scheduled send time to the end of the body, successful requests only. */
  latency: Distribution;
  /** Non-200 answers and transport failures. */
  errors: number;
  /** Worst lateness of the scheduler itself, milliseconds (high values mean the load generator was the limit). */
  schedulerLagMs: number;
  passed: boolean;
}

export interface SustainedResult {
  /** The highest offered rate that passed, or 0 if none did. */
  sustained: number;
  steps: RateStep[];
}

/** The pass rule of DESIGN §8: p99 under one second and no errors. */
const P99_LIMIT_MS = 1_000;
const POOL_CONNECTIONS = 512;

async function runStep(target: Target, pool: Pool, rate: number, seconds: number): Promise<RateStep> {
  const total = Math.round(rate * seconds);
  const intervalNs = 1e9 / rate;
  const samples: number[] = [];
  const pending: Promise<void>[] = [];
  let errors = 0;
  let schedulerLagMs = 0;

  const send = async (scheduledAt: bigint): Promise<void> => {
    try {
      const response = await pool.request({ path: CHAT_PATH, method: 'POST', headers: target.headers, body: CHAT_BODY });
      await response.body.arrayBuffer();
      const elapsed = Number(process.hrtime.bigint() - scheduledAt) / 1e6;
      if (response.statusCode === 200) samples.push(elapsed);
      else errors++;
    } catch {
      errors++;
    }
  };

  const start = process.hrtime.bigint();
  let next = 0;
  while (next < total) {
    const now = process.hrtime.bigint();
    while (next < total) {
      const scheduledAt = start + BigInt(Math.round(next * intervalNs));
      if (scheduledAt > now) break;
      schedulerLagMs = Math.max(schedulerLagMs, Number(now - scheduledAt) / 1e6);
      pending.push(send(scheduledAt));
      next++;
    }
    await sleep(1);
  }
  await Promise.all(pending);
  const latency = distribution(samples);
  return { offered: rate, sent: total, latency, errors, schedulerLagMs, passed: errors === 0 && latency.count === total && latency.p99 < P99_LIMIT_MS };
}

export interface RateSchedule {
  /** Offered rates, requests/s, tried in order until one fails. */
  rates: readonly number[];
  stepSeconds: number;
  /** Unmeasured pacing at the first rate before the first step. */
  warmupSeconds: number;
}

/** Tries each rate in order and stops at the first that fails; `onStep` reports progress. */
export async function measureSustainedRate(target: Target, schedule: RateSchedule, onStep: (step: RateStep) => void): Promise<SustainedResult> {
  const pool = new Pool(target.origin, { connections: POOL_CONNECTIONS, pipelining: 1, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const steps: RateStep[] = [];
  let sustained = 0;
  const { rates, stepSeconds: seconds, warmupSeconds } = schedule;
  try {
    if (rates[0] !== undefined && warmupSeconds > 0) await runStep(target, pool, rates[0], warmupSeconds);
    for (const rate of rates) {
      const step = await runStep(target, pool, rate, seconds);
      steps.push(step);
      onStep(step);
      if (!step.passed) break;
      sustained = rate;
      await sleep(250);
    }
  } finally {
    await pool.close();
  }
  return { sustained, steps };
}
