// Control endpoints under /_sim for out-of-process use (the demo, the benchmark, other processes' tests).
//   POST /_sim/config    partial SimulatorOptions (numbers only; host and port are fixed at start)
//   POST /_sim/faults    a Fault (`times` may be "Infinity" or null for Infinity)
//   DELETE /_sim/faults  removes every fault
//   GET /_sim/requests   recorded requests, oldest first
//   DELETE /_sim/requests
//   POST /_sim/reset     faults, recorded requests and prompt-cache state
//   GET /_sim/health     {"ok":true}

import type { ServerResponse } from 'node:http';
import { sendJson } from './exchange.ts';
import { parseFault, type FaultQueue } from './faults.ts';
import { isRecord } from './json-narrow.ts';
import type { RequestRecorder } from './recorder.ts';
import type { SimulatorOptions } from './types.ts';

export interface ControlTarget {
  options: Required<SimulatorOptions>;
  faults: FaultQueue;
  recorder: RequestRecorder;
  reset(): void;
}

const NUMERIC_OPTIONS = ['latencyMs', 'chunkDelayMs', 'streamChunks', 'replyTokens', 'recordLimit'] as const;

/** Applies a partial options object; returns an error message or undefined. */
export function applyOptions(options: Required<SimulatorOptions>, patch: unknown): string | undefined {
  if (!isRecord(patch)) return 'config must be a JSON object';
  for (const key of NUMERIC_OPTIONS) {
    const value = patch[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return `${key} must be a non-negative number`;
  }
  for (const key of NUMERIC_OPTIONS) {
    const value = patch[key];
    if (typeof value === 'number') options[key] = value;
  }
  return undefined;
}

export function handleControl(target: ControlTarget, method: string, path: string, json: unknown, response: ServerResponse): void {
  const route = `${method} ${path}`;
  switch (route) {
    case 'POST /_sim/config': {
      const error = applyOptions(target.options, json);
      return error === undefined ? sendJson(response, 200, target.options) : sendJson(response, 400, { error });
    }
    case 'POST /_sim/faults': {
      const fault = parseFault(json);
      if (typeof fault === 'string') return sendJson(response, 400, { error: fault });
      target.faults.add(fault);
      return sendJson(response, 200, { ok: true, faults: target.faults.size });
    }
    case 'DELETE /_sim/faults':
      target.faults.clear();
      return sendJson(response, 200, { ok: true });
    case 'GET /_sim/requests':
      return sendJson(response, 200, target.recorder.requests);
    case 'DELETE /_sim/requests':
      target.recorder.clear();
      return sendJson(response, 200, { ok: true });
    case 'POST /_sim/reset':
      target.reset();
      return sendJson(response, 200, { ok: true });
    case 'GET /_sim/health':
      return sendJson(response, 200, { ok: true });
    default:
      return sendJson(response, 404, { error: `unknown control endpoint ${route}` });
  }
}
