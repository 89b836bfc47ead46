import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthorized } from '../core/errors.ts';
import type { Caller } from '../features/inference/model-call.ts';
import { CallAbort } from '../lib/call-abort.ts';

export function callerOf(request: FastifyRequest): Caller {
  if (!request.apiKey) throw unauthorized();
  return { key: request.apiKey, requestId: request.id, trace: request.trace };
}

/** `useWalletBalance` may come in the body or the query string (GPTunneL-compatible clients send either). */
export function walletFromQuery(request: FastifyRequest): boolean {
  const query = request.query as Record<string, unknown> | undefined;
  return query?.useWalletBalance === 'true' || query?.useWalletBalance === '1';
}

/** Fires when the client disconnects before the answer is complete (a CallAbort: see lib/call-abort.ts for why not an AbortController). */
export function clientAbort(reply: FastifyReply): CallAbort {
  const controller = new CallAbort();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller;
}
