// Control endpoints under /_sim for out-of-process use (the demo, the benchmark, other processes' tests).
//   POST /_sim/config    partial SimulatorOptions (numbers only; host and port are fixed at start)
//   POST /_sim/faults    a Fault (`times` may be "Infinity" or null for Infinity)
//   DELETE /_sim/faults  removes every fault
//   GET /_sim/requests   recorded requests, oldest first
//   DELETE /_sim/requests
//   POST /_sim/reset     faults, recorded requests, prompt-cache state, video jobs and stored responses
//   GET /_sim/health     {"ok":true}
//   GET /_sim/files/{name}  the bytes behind image URLs (`img-<n>-<i>.png` → the 1×1 PNG), no auth; else 404

import type { ServerResponse } from 'node:http';
import { sendBytes, sendJson } from './exchange.ts';
import { parseFault, type FaultQueue } from './faults.ts';
import { isRecord } from './json-narrow.ts';
import { IMAGE_FILE_NAME, PIXEL_PNG_BASE64 } from './openai-images.ts';
import type { RequestRecorder } from './recorder.ts';
import type { SimulatorOptions } from './types.ts';

export interface ControlTarget {
  options: Required<SimulatorOptions>;
  faults: FaultQueue;
  recorder: RequestRecorder;
  reset(): void;
}

const NUMERIC_OPTIONS = ['latencyMs', 'chunkDelayMs', 'streamChunks', 'replyTokens', 'recordLimit', 'videoPollsToComplete'] as const;
const PIXEL_PNG = Buffer.from(PIXEL_PNG_BASE64, 'base64');

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
  if (method === 'GET' && path.startsWith('/_sim/files/')) {
    const name = path.slice('/_sim/files/'.length);
    return IMAGE_FILE_NAME.test(name) ? sendBytes(response, 200, PIXEL_PNG, 'image/png') : sendJson(response, 404, { error: `unknown file ${name}` });
  }
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
