// Stored Responses API objects of one simulator instance (`store` not false), for GET /v1/responses/{id}
// and `previous_response_id`. Ids keep counting up across reset(); the oldest are forgotten past a bound.

import type { JsonRecord } from './json-narrow.ts';

const MAX_RESPONSES = 10_000;

export interface StoredResponse {
  /** The final response object, as the create call returned it. */
  body: JsonRecord;
  /** The conversation before this response's output: earlier turns' items, then this request's input items. */
  inputItems: JsonRecord[];
  /** This response's output items (they continue the conversation of a follow-up request). */
  outputItems: JsonRecord[];
}

export class ResponseStore {
  readonly #responses = new Map<string, StoredResponse>();

  get(id: string): StoredResponse | undefined {
    return this.#responses.get(id);
  }

  put(id: string, stored: StoredResponse): void {
    if (this.#responses.size >= MAX_RESPONSES) {
      const oldest = this.#responses.keys().next();
      if (oldest.done !== true) this.#responses.delete(oldest.value);
    }
    this.#responses.set(id, stored);
  }

  delete(id: string): boolean {
    return this.#responses.delete(id);
  }

  clear(): void {
    this.#responses.clear();
  }
}
