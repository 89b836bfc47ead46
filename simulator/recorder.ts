// Ring buffer of the vendor requests the simulator received, so tests can assert on what was forwarded.

import type { IncomingHttpHeaders } from 'node:http';
import type { RecordedRequest } from './types.ts';

export class RequestRecorder {
  readonly requests: RecordedRequest[] = [];
  #limit: () => number;

  /** `limit` is read on every add, so a changed `recordLimit` option applies at once. */
  constructor(limit: () => number) {
    this.#limit = limit;
  }

  add(request: RecordedRequest): void {
    this.requests.push(request);
    const excess = this.requests.length - Math.max(0, this.#limit());
    if (excess > 0) this.requests.splice(0, excess);
  }

  last(pathPrefix?: string): RecordedRequest | undefined {
    for (let index = this.requests.length - 1; index >= 0; index -= 1) {
      const request = this.requests[index];
      if (request !== undefined && (pathPrefix === undefined || request.path.startsWith(pathPrefix))) return request;
    }
    return undefined;
  }

  clear(): void {
    this.requests.length = 0;
  }
}

export function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}
