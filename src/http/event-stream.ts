import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '../core/errors.ts';
import { writeFrames } from '../lib/sse-writer.ts';
import { toCatalogueError } from './plugins/errors.ts';

/**
 * Answers with a server-sent-events stream. `frames` yields whole frames; when the client goes away the source generator
 * is closed (its `finally` blocks book the charge) and `abort` stops the upstream call. A failure after the head is sent
 * becomes the dialect's error frame (`errorFrame`).
 */
export async function sendEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  frames: AsyncGenerator<string>,
  abort: AbortController,
  errorFrame: (error: GatewayError) => string,
): Promise<void> {
  const response = reply.raw;
  const onClose = (): void => {
    if (!response.writableFinished) abort.abort();
  };
  response.on('close', onClose);
  reply.hijack();
  response.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  try {
    const open = await writeFrames(response, frames);
    if (!open) await frames.return(undefined);
  } catch (raw) {
    const error = toCatalogueError(raw, false);
    request.log.warn({ err: raw }, 'stream ended by an error');
    if (!response.destroyed) response.write(errorFrame(error));
  } finally {
    response.off('close', onClose);
    if (!response.writableEnded) response.end();
  }
}
