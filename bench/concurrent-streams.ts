// How many streams a target holds open at once: K streaming requests fired together while the simulator spaces its chunks
// out, so every stream stays open for seconds (bench-plan.ts streamHeldChunks); a step passes when all K finish with 200 and `data: [DONE]`.

import { Pool } from 'undici';
import { setTimeout as sleep } from 'node:timers/promises';
import { readOneStream } from './one-connection.ts';
import { PeakResidentSampler } from './process-stats.ts';
import type { Target } from './targets.ts';

export interface StreamsStep {
  streams: number;
  /** Most streams seen open at the same moment (head received, end not yet). */
  peakOpen: number;
  errors: number;
  incomplete: number;
  seconds: number;
  passed: boolean;
  /** Highest VmRSS of the target's process sampled while the step ran (bytes): the memory the goal at 1,000 streams names. */
  rssPeak: number;
}

export interface StreamsResult {
  /** The largest step with every stream complete and no error, or 0. */
  held: number;
  steps: StreamsStep[];
}

async function runStep(target: Target, streams: number, rssSampleMs: number): Promise<StreamsStep> {
  const sampler = new PeakResidentSampler(target.pid, rssSampleMs);
  sampler.start();
  const pool = new Pool(target.origin, { connections: streams, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  let open = 0;
  let peakOpen = 0;
  let errors = 0;
  let incomplete = 0;
  const started = Date.now();
  try {
    await Promise.all(
      Array.from({ length: streams }, async () => {
        let opened = false;
        try {
          const outcome = await readOneStream(pool, target, () => {
            opened = true;
            peakOpen = Math.max(peakOpen, ++open);
          });
          if (outcome.status !== 200) errors++;
          else if (!outcome.complete) incomplete++;
        } catch {
          errors++;
        } finally {
          if (opened) open--;
        }
      }),
    );
  } finally {
    await pool.destroy();
  }
  const rssPeak = sampler.stop();
  const passed = errors === 0 && incomplete === 0;
  return { streams, peakOpen, errors, incomplete, seconds: (Date.now() - started) / 1000, passed, rssPeak };
}

export async function measureConcurrentStreams(target: Target, steps: readonly number[], rssSampleMs: number, onStep: (step: StreamsStep) => void): Promise<StreamsResult> {
  const results: StreamsStep[] = [];
  let held = 0;
  for (const streams of steps) {
    const step = await runStep(target, streams, rssSampleMs);
    results.push(step);
    onStep(step);
    if (!step.passed) break;
    held = streams;
    await sleep(250);
  }
  return { held, steps: results };
}
