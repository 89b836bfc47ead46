import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Agent, errors, request, type Dispatcher, type FormData } from 'undici';
import { UpstreamError } from './upstream-error.ts';

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; json(): Promise<unknown>; arrayBuffer(): Promise<ArrayBuffer> };
}

/** A 2xx answer read whole (`sendForText`). */
export interface UpstreamText {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

/** Told how long each vendor call took until its response head, by provider id and operation (a path without ids). */
export type UpstreamObserver = (provider: string, operation: string, seconds: number) => void;

interface HttpClientOptions {
  observe?: UpstreamObserver;
  /** The provider id calls are labelled with (set by `forProvider`). */
  provider?: string;
  /** A pool to share instead of making one. */
  agent?: Agent;
}

/**
 * The one place the gateway talks HTTP to vendors: a keep-alive connection pool per origin (undici Agent), the upstream
 * latency of every call, and the mapping of transport failures to UpstreamError. Vendor adapters keep only their URLs,
 * headers and body conversion.
 */
export class HttpClient {
  private readonly agent: Agent;

  constructor(timeoutMs: number, private readonly options: HttpClientOptions = {}) {
    this.agent =
      options.agent ??
      new Agent({
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        // Enough for every stream a gateway holds at once; each open stream keeps its upstream connection.
        connections: 4096,
        pipelining: 1,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
  }

  /** The same pool, its calls' latency labelled with this provider id. Closing the view closes the shared pool. */
  forProvider(provider: string): HttpClient {
    return new HttpClient(0, { ...this.options, provider, agent: this.agent });
  }

  /** Sends a request; a non-2xx answer is read whole and thrown as UpstreamError. */
  async send(url: string, init: { method?: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string | Buffer | FormData; signal?: AbortSignal }): Promise<UpstreamResponse> {
    let response: Dispatcher.ResponseData;
    const started = process.hrtime.bigint();
    try {
      response = await request(url, {
        method: init.method ?? 'POST',
        headers: init.headers,
        body: init.body ?? null,
        signal: init.signal ?? null,
        dispatcher: this.agent,
      });
    } catch (error) {
      throw transportError(error);
    }
    this.options.observe?.(this.options.provider ?? 'unknown', operationOf(url), Number(process.hrtime.bigint() - started) / 1e9);
    if (response.statusCode >= 200 && response.statusCode < 300) {
      return { status: response.statusCode, headers: response.headers, body: response.body as UpstreamResponse['body'] };
    }
    let text = '';
    try {
      text = await response.body.text();
    } catch {
      // The error body is a courtesy; the status says enough.
    }
    throw answeredError(response.statusCode, text, response.headers);
  }

  /**
   * Sends a request and reads the answer whole, for calls whose body is not streamed on (non-stream chat, messages,
   * embeddings): the same outcomes as `send` + reading the body, through undici's dispatcher directly — no response
   * stream, async resource or body mixin per call (~10 µs of CPU a call at the bench's load, issue 16).
   */
  sendForText(url: string, init: { method?: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string; signal?: AbortSignal | undefined }): Promise<UpstreamText> {
    const { origin, path } = splitUrl(url);
    return new Promise<UpstreamText>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const onHead = (): void => this.options.observe?.(this.options.provider ?? 'unknown', operationOf(url), Number(process.hrtime.bigint() - started) / 1e9);
      const handler = new TextHandler(resolve, reject, init.signal, onHead);
      try {
        this.agent.dispatch({ origin, path, method: init.method ?? 'POST', headers: init.headers, body: init.body ?? null }, handler);
      } catch (error) {
        reject(transportError(error));
      }
    });
  }

  /** Reads a 2xx body as JSON, mapping a broken or invalid body to UpstreamError. */
  async json<T>(response: UpstreamResponse): Promise<T> {
    try {
      return (await response.body.json()) as T;
    } catch (error) {
      throw transportError(error);
    }
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/** A vendor's non-2xx answer as UpstreamError: its status, body, content type and `retry-after`. */
function answeredError(status: number, text: string, headers: Record<string, string | string[] | undefined>): UpstreamError {
  return new UpstreamError(status, text, String(headers['content-type'] ?? 'application/json'), `upstream answered ${status}`, 'http', retryAfterMs(headers['retry-after']));
}

/** Parses a 2xx text as JSON, mapping an invalid body to UpstreamError as `json` does. */
export function parseJsonBody<T>(text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw transportError(error);
  }
}

/**
 * Collects one answer for `sendForText`: a 2xx resolves with its text, any other status rejects with UpstreamError as
 * `send` does, a transport failure or the caller's abort rejects through `transportError`.
 */
class TextHandler implements Dispatcher.DispatchHandler {
  private readonly chunks: Buffer[] = [];
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private controller: Dispatcher.DispatchController | undefined;
  private readonly onAbort = (): void => this.controller?.abort(this.signal?.reason);

  constructor(
    private readonly resolve: (text: UpstreamText) => void,
    private readonly reject: (error: UpstreamError) => void,
    private readonly signal: AbortSignal | undefined,
    private readonly onHead: () => void,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (!this.signal) return;
    if (this.signal.aborted) controller.abort(this.signal.reason);
    else this.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.status = statusCode;
    this.headers = headers;
    this.onHead();
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    const { chunks, status, headers } = this;
    const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    if (status >= 200 && status < 300) {
      this.resolve({ status, headers, text });
      return;
    }
    this.reject(answeredError(status, text, headers));
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.reject(transportError(error));
  }
}

/** Origin and path of the few URLs the gateway calls, split once each (a URL parse per call otherwise). */
const splitUrls = new Map<string, { origin: string; path: string }>();
const SPLIT_URLS_KEPT = 1_000;

function splitUrl(url: string): { origin: string; path: string } {
  let split = splitUrls.get(url);
  if (!split) {
    const parsed = new URL(url);
    split = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (splitUrls.size >= SPLIT_URLS_KEPT) splitUrls.clear();
    splitUrls.set(url, split);
  }
  return split;
}

/** `retry-after` as seconds or an HTTP date (RFC 9110 §10.2.3), in ms from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const operations = new Map<string, string>();

/** `https://host/v1/videos/video_6f2/content?x` → `videos/:id/content`: ids would make a label per call. Remembered per URL. */
export function operationOf(url: string): string {
  let operation = operations.get(url);
  if (operation === undefined) {
    const path = url.replace(/^[a-z]+:\/\/[^/]+/i, '').split('?', 1)[0] ?? '';
    operation = path
      .split('/')
      .filter((segment) => segment !== '' && segment !== 'v1')
      .map((segment) => (/\d/.test(segment) || segment.length > 40 ? ':id' : segment))
      .join('/');
    if (operations.size >= SPLIT_URLS_KEPT) operations.clear();
    operations.set(url, operation);
  }
  return operation;
}

export function transportError(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) {
    return new UpstreamError(504, '', 'text/plain', 'upstream timed out', 'timeout');
  }
  const message = error instanceof Error ? error.message : String(error);
  return new UpstreamError(502, '', 'text/plain', `upstream unreachable: ${message}`, 'network');
}
