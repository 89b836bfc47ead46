// Public types of the vendor simulator. `server.ts` re-exports them.

export interface SimulatorOptions {
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /** Fixed delay in milliseconds before every vendor response head (default 0). */
  latencyMs?: number;
  /** Delay in milliseconds before each streamed content chunk after the first (default 0). */
  chunkDelayMs?: number;
  /** Number of pieces a streamed text, thinking or tool-argument body is split into (default 8). */
  streamChunks?: number;
  /** Completion length in tokens when max tokens allow it (default 16). */
  replyTokens?: number;
  /** Size of the ring buffer of recorded requests (default 1000). */
  recordLimit?: number;
  /** GET /v1/videos/{id} polls after which a video is terminal (completed or failed); default 2, 0 = at creation. */
  videoPollsToComplete?: number;
}

export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  /** Lower-case header names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** Raw request body as UTF-8 text ("" when empty). */
  body: string;
  /** Parsed body, or undefined when the body is empty or not JSON. */
  json: unknown;
  /** Arrival time, Unix milliseconds. */
  at: number;
}

export interface Fault {
  /** Apply only to requests whose path starts with `path` and whose body `model` equals `model`. */
  match?: { path?: string; model?: string };
  /** How many requests it affects (default 1; Infinity allowed). */
  times?: number;
  /** Answer with this HTTP status and the vendor's own error body for it. */
  status?: number;
  /** Replaces the vendor error body sent with `status`. */
  body?: unknown;
  /** Extra response headers sent with `status` (for example `retry-after`). */
  headers?: Record<string, string>;
  /** Extra delay in milliseconds before the response head (slow first byte). */
  delayMs?: number;
  /** Streams: destroy the socket after N content chunks (no final usage, no [DONE] / message_stop). */
  cutAfterChunks?: number;
  /**
   * Streams: after N content chunks send the vendor's in-stream error and end the response.
   * Anthropic: `event: error` with `overloaded_error`; OpenAI: `data: {"error":{... "type":"server_error"}}`.
   */
  errorEventAfterChunks?: number;
}

export interface Simulator {
  /** `http://host:port`. OpenAI base URL is `${url}/v1`, Anthropic base URL is `url`. */
  url: string;
  port: number;
  /** Live options; changes take effect on the next request. */
  options: Required<SimulatorOptions>;
  /** Recorded vendor requests, newest last (control requests under /_sim are not recorded). */
  readonly requests: RecordedRequest[];
  lastRequest(pathPrefix?: string): RecordedRequest | undefined;
  addFault(fault: Fault): void;
  /** Clears faults, recorded requests, prompt-cache state, video jobs and stored responses (ids keep counting up). */
  reset(): void;
  close(): Promise<void>;
}
