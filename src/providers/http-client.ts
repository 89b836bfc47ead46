import { Agent, errors, util, type Dispatcher, type FormData } from 'undici';
import { UpstreamError } from './upstream-error.ts';
import { decodeUtf8 } from '../lib/utf8.ts';
import type { CallSignal } from '../lib/call-abort.ts';
import type { Sink } from '../lib/push-stream.ts';

/**
 * A 2xx answer's body as it arrives: its chunks by async iteration (once), or the whole of it. `destroy` stops reading a
 * body before its end, which aborts its request (the vendor stops generating); after the end it does nothing.
 */
export interface UpstreamBody extends AsyncIterable<Buffer> {
  /** True once the body ended, failed or was destroyed. */
  readonly destroyed: boolean;
  destroy(): void;
  /**
   * Pushes the chunks to `sink` as they arrive instead (in place of iteration: a body is read once), then its end or its
   * failure (the caller's abort is one); a body destroyed by its reader tells the sink nothing more. The sink must not throw.
   */
  start(sink: Sink<Buffer>): void;
  /** Pauses the vendor's connection after the chunk under way (back-pressure of a pushed body). */
  pause(): void;
  resume(): void;
  text(): Promise<string>;
  json(): Promise<unknown>;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/**
 * A 2xx answer as it arrives. Of its head only the content type is kept: it is all a caller reads of a 2xx answer, and
 * undici's parse of every header into strings cost ~7.7 µs a call for the ~24 headers OpenAI sends (0.8 µs for the
 * simulator's 5), on every model call (issue 16). A non-2xx answer's head is parsed whole (UpstreamError).
 */
export interface UpstreamResponse {
  status: number;
  contentType: string | undefined;
  body: UpstreamBody;
}

/** A 2xx answer read whole (`sendForText`); no caller reads its head. */
export interface UpstreamText {
  status: number;
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
        // Enough for every stream a gateway holds at once; each open stream keeps its upstream connection. A cap is only a
        // ceiling (connections open on demand): at 50 client connections 4,096 and 64 served alike, 16 queued calls and
        // served 6 % fewer (bench/RESULTS.md, eleventh session).
        connections: 4096,
        // undici never pipelines a non-idempotent request, so model calls (POSTs) go one at a time per connection anyway.
        pipelining: 1,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
  }

  /** The same pool, its calls' latency labelled with this provider id. Closing the view closes the shared pool. */
  forProvider(provider: string): HttpClient {
    return new HttpClient(0, { ...this.options, provider, agent: this.agent });
  }

  /**
   * Sends a request; a non-2xx answer is read whole and thrown as UpstreamError. The 2xx body is read straight from
   * undici's dispatcher (BodyHandler), without the Readable stream, async resource and abort listener that undici's
   * `request` makes per call: a streamed chat call 261 → 211 µs of CPU, a Messages stream 236 → 181 (issue 16).
   */
  send(url: string, init: { method?: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string | Buffer | FormData; signal?: CallSignal | undefined }): Promise<UpstreamResponse> {
    return this.dispatch(url, init, (resolve, reject, onHead) => new BodyHandler(resolve, reject, init.signal, onHead));
  }

  /**
   * Sends a request and reads the answer whole, for calls whose body is not streamed on (non-stream chat, messages,
   * embeddings): the same outcomes as `send` + reading the body, through undici's dispatcher directly — no response
   * stream, async resource or body mixin per call (~10 µs of CPU a call at the bench's load, issue 16).
   */
  sendForText(url: string, init: { method?: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string | Buffer; signal?: CallSignal | undefined }): Promise<UpstreamText> {
    return this.dispatch(url, init, (resolve, reject, onHead) => new TextHandler(resolve, reject, init.signal, onHead));
  }

  /** Dispatches one call to the pool with the handler `handle` makes; the latency until the head is observed. */
  private dispatch<Answer>(
    url: string,
    init: { method?: Dispatcher.HttpMethod; headers: Record<string, string>; body?: string | Buffer | FormData },
    handle: (resolve: (answer: Answer) => void, reject: (error: UpstreamError) => void, onHead: () => void) => Dispatcher.DispatchHandler,
  ): Promise<Answer> {
    const { origin, path } = splitUrl(url);
    return new Promise<Answer>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const onHead = (): void => this.options.observe?.(this.options.provider ?? 'unknown', operationOf(url), Number(process.hrtime.bigint() - started) / 1e9);
      try {
        this.agent.dispatch({ origin, path, method: init.method ?? 'POST', headers: init.headers, body: init.body ?? null }, handle(resolve, reject, onHead));
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

/** A response's header fields, as undici's `parseHeaders` makes them (lower-case names, repeated fields as arrays). */
type ResponseHeaders = Record<string, string | string[] | undefined>;
const NO_HEADERS: ResponseHeaders = Object.freeze({});
const CONTENT_TYPE = Buffer.from('content-type', 'latin1');

/**
 * The value of the field `name` (lower-case) among undici's raw header buffers (name, value, name, value …), the first if
 * repeated, without making strings of the other fields. Names compare ASCII case-insensitively: a byte OR 0x20 is the
 * lower-case letter for a letter, and no other byte a field name may hold becomes one.
 */
export function rawHeaderValue(rawHeaders: readonly Buffer[], name: Buffer): string | undefined {
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const field = rawHeaders[index]!;
    if (field.length !== name.length) continue;
    let at = 0;
    while (at < field.length && (field[at]! | 0x20) === name[at]) at++;
    if (at === field.length) return rawHeaders[index + 1]!.toString('latin1');
  }
  return undefined;
}

/**
 * What both of the client's handlers share: the call's promise (`resolve` with its answer, `reject`), the call's abort,
 * the caller's abort signal wired to it (aborted before the call is sent, it is never sent), and the answer's head.
 *
 * The handlers implement the interface undici 7's core calls (onConnect, onHeaders, onData, onComplete, onError). A
 * handler of its newer interface (onRequestStart, onResponseStart, …) is wrapped per call in an UnwrapHandler that turns
 * the core's calls into the newer ones, and its controller keeps the raw header buffers (views of the socket's chunk) for
 * as long as the response lasts: on a held stream, ~2.5 KB of a gateway's ~28 KB (issue 16).
 */
abstract class CallHandler<Answer> implements Dispatcher.DispatchHandler {
  protected status = 0;
  /** A non-2xx answer's head, parsed whole for its UpstreamError; empty for a 2xx answer. */
  protected headers: ResponseHeaders = NO_HEADERS;
  /** A 2xx answer's content type. */
  protected contentType: string | undefined;
  /** Aborts the call (undici's `onConnect` argument); undefined until the call has a connection. */
  protected abortCall: ((error?: Error) => void) | undefined;
  private readonly onAbort = (): void => this.abortCall?.(this.signal?.reason as Error);

  constructor(
    protected readonly resolve: (answer: Answer) => void,
    protected readonly reject: (error: UpstreamError) => void,
    private readonly signal: CallSignal | undefined,
    private readonly onHead: () => void,
  ) {}

  onConnect(abort: (error?: Error) => void): void {
    this.abortCall = abort;
    if (!this.signal) return;
    if (this.signal.aborted) abort(this.signal.reason as Error);
    else this.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /**
   * The head: kept as strings, not the raw buffers (views of the socket's chunk) — a 2xx answer's content type, a non-2xx
   * answer's every field. Returns whether undici should go on reading.
   */
  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, _statusText: string): boolean {
    this.status = statusCode;
    if (statusCode >= 200 && statusCode < 300) this.contentType = rawHeaderValue(rawHeaders, CONTENT_TYPE);
    else this.headers = util.parseHeaders(rawHeaders) as ResponseHeaders;
    this.onHead();
    return true;
  }

  /** The call is over (ended, failed or dropped): the caller's signal has nothing left to abort. */
  protected settled(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }
}

/** An answer's text (a long answer in another script than English decodes several times faster through decodeUtf8). */
const textOf = (chunks: readonly Buffer[]): string => decodeUtf8(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));

/**
 * Collects one answer for `sendForText`: a 2xx resolves with its text, any other status rejects with UpstreamError as
 * `send` does, a transport failure or the caller's abort rejects through `transportError`.
 */
class TextHandler extends CallHandler<UpstreamText> {
  private readonly chunks: Buffer[] = [];

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.settled();
    const { status } = this;
    const text = textOf(this.chunks);
    if (status >= 200 && status < 300) {
      this.resolve({ status, text });
      return;
    }
    this.reject(answeredError(status, text, this.headers));
  }

  onError(error: Error): void {
    this.settled();
    this.reject(transportError(error));
  }
}

/** Queued body bytes above which the vendor's connection is paused until the reader catches up (undici's own default). */
const HIGH_WATER_BYTES = 64 * 1024;
/** The abort reason of a body destroyed by its reader: one shared error, as a stack trace per stream cost ~4 µs. */
const BODY_DESTROYED = new Error('the upstream body was destroyed by its reader');
const DONE: IteratorReturnResult<undefined> = Object.freeze({ done: true, value: undefined });

const enum BodyState {
  /** Before the response head, or a non-2xx answer being read whole. */
  Head,
  /** A 2xx body being read. */
  Reading,
  Ended,
  Failed,
  Destroyed,
}

/**
 * One call of `send`, and the 2xx body it hands out: undici's dispatcher pushes chunks in, and the reader either takes
 * them pushed (`start`: each chunk handed to its sink in undici's own call, the streamed calls' way) or pulls them out
 * by async iteration. A chunk arriving while the puller waits goes to it directly; otherwise it is queued, and above
 * HIGH_WATER_BYTES the connection is paused (backpressure) until the queue is read. A transport failure after the head
 * reaches the reader after the chunks that came before it (as the error of its next read, or its sink's `fail`); the
 * caller's abort is one. A non-2xx answer is read whole and rejects as UpstreamError, as `sendForText` does.
 */
class BodyHandler extends CallHandler<UpstreamResponse> implements UpstreamBody, AsyncIterableIterator<Buffer> {
  private state = BodyState.Head;
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  private paused = false;
  private iterated = false;
  private failure: unknown;
  private waiting: { resolve: (result: IteratorResult<Buffer>) => void; reject: (error: unknown) => void } | undefined;
  /** The pushed reader (`start`). */
  private sink: Sink<Buffer> | undefined;
  /** A pushed reader asked for a pause (`pause`); `held` once undici was told to stop reading. */
  private readerPaused = false;
  private held = false;
  /** Makes undici read on after `onData` answered false (the connection paused for backpressure). */
  private resumeCall: (() => void) | undefined;

  override onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    super.onHeaders(statusCode, rawHeaders, resume, statusText);
    if (statusCode < 200 || statusCode >= 300) return true;
    this.resumeCall = resume;
    this.state = BodyState.Reading;
    this.resolve({ status: statusCode, contentType: this.contentType, body: this });
    return true;
  }

  /** Returns false to pause the connection while more than HIGH_WATER_BYTES wait for the reader. */
  onData(chunk: Buffer): boolean {
    if (this.state === BodyState.Head) {
      this.queue.push(chunk); // a non-2xx answer's text
      return true;
    }
    if (this.state !== BodyState.Reading) return true;
    const sink = this.sink;
    if (sink) {
      sink.next(chunk);
      if (!this.readerPaused) return true;
      this.held = true;
      return false;
    }
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting.resolve({ done: false, value: chunk });
      return true;
    }
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.queuedBytes > HIGH_WATER_BYTES) this.paused = true;
    return !this.paused;
  }

  onComplete(): void {
    this.settled();
    if (this.state === BodyState.Head) {
      this.reject(answeredError(this.status, textOf(this.queue), this.headers));
      return;
    }
    if (this.state !== BodyState.Reading) return;
    this.state = BodyState.Ended;
    if (this.sink) {
      this.sink.end();
      return;
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(DONE);
  }

  onError(error: Error): void {
    this.settled();
    if (this.state === BodyState.Head) {
      // No head yet: the call failed. A non-2xx answer whose text broke off: the status says enough.
      this.reject(this.status === 0 ? transportError(error) : answeredError(this.status, '', this.headers));
      return;
    }
    if (this.state !== BodyState.Reading) return;
    this.state = BodyState.Failed;
    this.failure = error;
    if (this.sink) {
      this.sink.fail(error);
      return;
    }
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.reject(error);
  }

  get destroyed(): boolean {
    return this.state !== BodyState.Reading;
  }

  destroy(): void {
    if (this.state !== BodyState.Reading) return;
    this.state = BodyState.Destroyed;
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.settled();
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.resolve(DONE);
    this.abortCall?.(BODY_DESTROYED);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Buffer> {
    this.once();
    return this;
  }

  start(sink: Sink<Buffer>): void {
    this.once();
    // What came before the reader: handed over first, and a connection paused for it (high water) goes on reading.
    const wasPaused = this.paused;
    this.paused = false;
    this.queuedBytes = 0;
    for (let chunk = this.queue.shift(); chunk !== undefined; chunk = this.queue.shift()) {
      sink.next(chunk);
      if (this.state === BodyState.Destroyed) return;
    }
    if (this.state === BodyState.Ended) sink.end();
    else if (this.state === BodyState.Failed) sink.fail(this.failure);
    else if (this.state === BodyState.Reading) {
      this.sink = sink;
      if (wasPaused && !this.readerPaused) this.resumeCall?.();
      else if (wasPaused) this.held = true;
    }
  }

  pause(): void {
    this.readerPaused = true;
  }

  resume(): void {
    this.readerPaused = false;
    if (!this.held) return;
    this.held = false;
    if (this.state === BodyState.Reading) this.resumeCall?.();
  }

  private once(): void {
    if (this.iterated) throw new Error('An upstream body can be read only once.');
    this.iterated = true;
  }

  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.queue.shift();
    if (chunk !== undefined) {
      this.queuedBytes -= chunk.length;
      if (this.paused && this.queuedBytes <= HIGH_WATER_BYTES / 2) {
        this.paused = false;
        this.resumeCall?.();
      }
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.state === BodyState.Failed) return Promise.reject(this.failure);
    if (this.state !== BodyState.Reading) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  /** Leaving the loop before the end stops the body (and its request). */
  return(): Promise<IteratorResult<Buffer>> {
    this.destroy();
    return Promise.resolve(DONE);
  }

  private async bytes(): Promise<Buffer> {
    const chunks: Buffer[] = [];
    for await (const chunk of this) chunks.push(chunk);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }

  async text(): Promise<string> {
    return decodeUtf8(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
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
