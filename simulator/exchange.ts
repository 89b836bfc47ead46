// One request/response exchange as the endpoint handlers see it, and the ways to answer it.

import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FormData } from './multipart-form.ts';
import type { PromptCache } from './prompt-cache.ts';
import type { ResponseStore } from './response-store.ts';
import type { Fault, SimulatorOptions } from './types.ts';
import type { VideoStore } from './video-store.ts';

/** Per-instance state shared by all handlers. */
export interface SimulatorState {
  options: Required<SimulatorOptions>;
  promptCache: PromptCache;
  videos: VideoStore;
  /** Stored Responses API objects (POST /v1/responses with `store` not false). */
  responses: ResponseStore;
  /** `http://host:port` this simulator listens on ("" before it listens). */
  readonly url: string;
  /** Increasing counter used for response ids (`chatcmpl-<n>`, `msg_…`, `req_…`). */
  nextSequence(): number;
}

export interface Exchange {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** Decoded `:name` segments of the matched route template (`GET /v1/videos/:id`). */
  params: Readonly<Record<string, string>>;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body; undefined when empty or unparseable (then `bodyText` holds the raw text). */
  json: unknown;
  bodyText: string;
  /** Raw body bytes (multipart endpoints read these). */
  bodyBytes: Buffer;
  /** The parsed multipart/form-data body, when the request carries one. */
  form: FormData | undefined;
  response: ServerResponse;
  /** The fault taken for this request, if any. */
  fault: Fault | undefined;
  state: SimulatorState;
}

export type Handler = (exchange: Exchange) => void | Promise<void>;

export function sendJson(response: ServerResponse, status: number, body: unknown, headers?: OutgoingHttpHeaders): void {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  response.end(text);
}

export function sendText(response: ServerResponse, status: number, text: string, contentType: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

export function sendBytes(response: ServerResponse, status: number, bytes: Buffer, contentType: string): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': bytes.length });
  response.end(bytes);
}

/**
 * The base URL clients reach this simulator at, for URLs it hands out: its own `url`, except when bound to a
 * wildcard address (0.0.0.0, ::), where the request's Host header is used.
 */
export function selfUrl(exchange: Exchange): string {
  const url = exchange.state.url;
  const host = exchange.headers.host;
  if (!/^http:\/\/(0\.0\.0\.0|\[::\])(:|$)/.test(url) || host === undefined || host === '') return url;
  return `http://${host}`;
}

/** One SSE frame. `lead` frames open the stream and are never interrupted by a fault. */
export interface StreamFrame {
  data: string;
  content?: boolean;
  lead?: boolean;
}

export interface StreamBehaviour {
  chunkDelayMs: number;
  /** Destroy the socket once this many content frames were written. */
  cutAfterChunks?: number | undefined;
  /** Write `errorFrame` and end once this many content frames were written. */
  errorAfterChunks?: number | undefined;
  errorFrame: string;
}

/**
 * Writes a stream. With no chunk delay the frames go out in one write; otherwise the buffer is flushed
 * and the delay awaited before every content frame after the first. A fault's threshold is checked
 * before every non-lead frame, so it fires after exactly N content frames.
 */
export async function writeStream(
  response: ServerResponse,
  headers: OutgoingHttpHeaders,
  frames: readonly StreamFrame[],
  behaviour: StreamBehaviour,
): Promise<void> {
  response.writeHead(200, headers);
  let buffer = '';
  let written = 0;
  for (const frame of frames) {
    if (!frame.lead) {
      if (behaviour.cutAfterChunks !== undefined && written >= behaviour.cutAfterChunks) {
        cut(response, buffer);
        return;
      }
      if (behaviour.errorAfterChunks !== undefined && written >= behaviour.errorAfterChunks) {
        response.end(buffer + behaviour.errorFrame);
        return;
      }
    }
    if (frame.content) {
      if (written > 0 && behaviour.chunkDelayMs > 0) {
        if (buffer !== '') response.write(buffer);
        buffer = '';
        await sleep(behaviour.chunkDelayMs);
        if (response.destroyed) return;
      }
      written += 1;
    }
    buffer += frame.data;
  }
  response.end(buffer);
}

function cut(response: ServerResponse, buffer: string): void {
  const destroy = (): void => {
    response.socket?.destroy();
  };
  if (buffer === '') {
    // Send the head first so the client sees a 200 that then breaks, as with a real cut stream.
    response.flushHeaders();
    response.write('', destroy);
  } else {
    response.write(buffer, destroy);
  }
}

export const SSE_HEADERS: OutgoingHttpHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};

/** Unix seconds. */
export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
