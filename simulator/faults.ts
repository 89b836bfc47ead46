// Injected faults: a queue of rules, each used up by the requests it affects.

import type { Fault } from './types.ts';

export interface FaultTarget {
  path: string;
  model: string | undefined;
  stream: boolean;
}

interface ActiveFault {
  fault: Fault;
  remaining: number;
}

/** Whether a fault does anything to this request; stream-only faults leave non-stream requests alone. */
function affects(fault: Fault, target: FaultTarget): boolean {
  const match = fault.match;
  if (match?.path !== undefined && !target.path.startsWith(match.path)) return false;
  if (match?.model !== undefined && match.model !== target.model) return false;
  if (fault.status !== undefined || fault.delayMs !== undefined) return true;
  return target.stream && (fault.cutAfterChunks !== undefined || fault.errorEventAfterChunks !== undefined);
}

export class FaultQueue {
  #active: ActiveFault[] = [];

  add(fault: Fault): void {
    const times = fault.times ?? 1;
    if (!(times > 0)) return;
    this.#active.push({ fault, remaining: times });
  }

  /** The first fault (in insertion order) that affects the request, counted as used once. */
  take(target: FaultTarget): Fault | undefined {
    if (this.#active.length === 0) return undefined;
    const index = this.#active.findIndex((active) => affects(active.fault, target));
    const active = this.#active[index];
    if (active === undefined) return undefined;
    active.remaining -= 1;
    if (active.remaining <= 0) this.#active.splice(index, 1);
    return active.fault;
  }

  clear(): void {
    this.#active = [];
  }

  get size(): number {
    return this.#active.length;
  }
}

/** Reads a fault from a control-endpoint body; `times` may be a number, "Infinity" or null (= Infinity). */
export function parseFault(value: unknown): Fault | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'fault must be a JSON object';
  const input = value as Record<string, unknown>;
  const fault: Fault = {};
  const match = input.match;
  if (match !== undefined) {
    if (typeof match !== 'object' || match === null) return 'match must be an object';
    const { path, model } = match as Record<string, unknown>;
    fault.match = {};
    if (typeof path === 'string') fault.match.path = path;
    if (typeof model === 'string') fault.match.model = model;
  }
  if (input.times === null || input.times === 'Infinity') fault.times = Infinity;
  else if (typeof input.times === 'number') fault.times = input.times;
  for (const key of ['status', 'delayMs', 'cutAfterChunks', 'errorEventAfterChunks'] as const) {
    const field = input[key];
    if (field === undefined) continue;
    if (typeof field !== 'number' || !Number.isFinite(field) || field < 0) return `${key} must be a non-negative number`;
    fault[key] = field;
  }
  if ('body' in input) fault.body = input.body;
  if (typeof input.headers === 'object' && input.headers !== null) {
    const headers: Record<string, string> = {};
    for (const [name, header] of Object.entries(input.headers)) headers[name] = String(header);
    fault.headers = headers;
  }
  return fault;
}
