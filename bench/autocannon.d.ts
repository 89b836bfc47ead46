// The few parts of autocannon 8's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface AutocannonOptions {
    url: string;
    method?: 'GET' | 'POST';
    headers?: Record<string, string>;
    body?: string;
    connections?: number;
    /** Seconds. */
    duration?: number;
    pipelining?: number;
    /** Seconds before a request counts as a timeout. */
    timeout?: number;
    /** Total requests to send (instead of a duration). */
    amount?: number;
    /** Per-request shaping: each request passes through `setupRequest`, which may change its body. */
    requests?: Array<{ setupRequest?: (request: { body?: string; [field: string]: unknown }) => { body?: string; [field: string]: unknown } }>;
  }

  /** Percentiles of a histogram; latency values are milliseconds, request values are per-second samples. */
  interface AutocannonHistogram {
    average: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    /** Completed requests (on `requests`), samples (on `latency`). */
    total: number;
  }

  interface AutocannonResult {
    /** Seconds the run lasted. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    latency: AutocannonHistogram;
    requests: AutocannonHistogram & { sent: number };
  }

  function autocannon(options: AutocannonOptions): PromiseLike<AutocannonResult>;
  export = autocannon;
}
