import type { FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CATALOGUE, GatewayError } from '../core/errors.ts';
import type { Abortable } from '../lib/call-abort.ts';
import { extended } from '../lib/objects.ts';
import type { PushSource } from '../lib/push-stream.ts';
import { sendFrames } from '../lib/sse-writer.ts';
import { toCatalogueError } from './plugins/errors.ts';

/** What every event stream answers with, after the headers the request's hooks set (rate limits, deprecation). */
const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/**
 * Answers with a server-sent-events stream. `frames` pushes whole frames; when the client goes away the source is closed
 * (a relay books its charge) and `abort` stops the upstream call. A failure after the head is sent becomes the dialect's
 * error frame (`errorFrame`).
 */
export async function sendEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  frames: PushSource<string>,
  abort: Abortable,
  errorFrame: (error: GatewayError) => string,
): Promise<void> {
  const response = reply.raw;
  const trace = request.trace;
  if (trace) trace.stream = true;
  const onClose = (): void => {
    if (!response.writableFinished) abort.abort();
  };
  response.on('close', onClose);
  // A revoked key's streams are cut at once (the relays still book what was produced).
  const untrack = request.trackStream?.(abort);
  reply.hijack();
  response.writeHead(200, extended(reply.getHeaders() as Record<string, string>, STREAM_HEADERS));
  try {
    const open = await sendFrames(response, frames, trace ? () => trace.firstFrame(performance.now()) : undefined);
    if (!open) trace?.failed('client_closed');
  } catch (raw) {
    // A stream cut on purpose (its key revoked) says why, not how the upstream call happened to end.
    const reason: unknown = abort.signal.aborted ? abort.signal.reason : undefined;
    const error = reason instanceof GatewayError ? reason : toCatalogueError(raw, false);
    request.log.warn({ err: raw }, 'stream ended by an error');
    trace?.failed(abort.signal.aborted && !(reason instanceof GatewayError) ? 'client_closed' : ERROR_CATALOGUE[error.code].typeA);
    if (!response.destroyed) response.write(errorFrame(error));
  } finally {
    untrack?.();
    response.off('close', onClose);
    if (!response.writableEnded) response.end();
  }
}
