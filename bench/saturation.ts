// Throughput at a fixed number of connections with autocannon, and the CPU time the measured process spent per request.

import autocannon from 'autocannon';
import { cpuMicroseconds } from './process-stats.ts';
import { SCENARIOS, type BenchRequest, type Target } from './targets.ts';

export interface SaturationResult {
  requestsPerSecond: number;
  /** Whole milliseconds (autocannon's resolution). */
  p50Ms: number;
  p99Ms: number;
  completed: number;
  non2xx: number;
  /** Transport errors plus timeouts. */
  errors: number;
  /** CPU time (user + system, all threads) of the target's process divided by completed requests. */
  cpuMicrosecondsPerRequest: number;
}

/** `request`: what is sent (the bench's short chat request by default). */
export async function measureSaturation(target: Target, connections: number, seconds: number, request: BenchRequest = SCENARIOS.chat): Promise<SaturationResult> {
  const cpuBefore = cpuMicroseconds(target.pid);
  const result = await autocannon({
    url: `${target.origin}${request.path}`,
    method: 'POST',
    headers: target.headers,
    body: request.body,
    connections,
    duration: seconds,
    timeout: 10,
  });
  const cpu = cpuMicroseconds(target.pid) - cpuBefore;
  const completed = result.requests.total;
  return {
    requestsPerSecond: completed / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    completed,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    cpuMicrosecondsPerRequest: completed > 0 ? cpu / completed : Number.NaN,
  };
}
