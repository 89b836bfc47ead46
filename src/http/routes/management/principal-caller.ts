import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../../features/inference/model-call.ts';
import { consoleKey } from '../../../features/keys/console-key.ts';
import { principalOf } from './me.ts';

/**
 * The management API's door onto services that take a key's caller (knowledge bases, tasks): the management key itself, or
 * for a signed-in session the user's console key. Either way the services scope by the key's user, so a user sees here what
 * their inference keys see through SPEC's endpoints.
 */
export function principalCaller(request: FastifyRequest): Caller {
  const principal = principalOf(request);
  const key = principal.via === 'key' && request.apiKey ? request.apiKey : consoleKey(principal.user.id);
  return { key, requestId: request.id, trace: request.trace };
}

/** `principalCaller` for a request that may be charged: its request-log row is written under that key, as a model call's is. */
export function spendingCaller(request: FastifyRequest): Caller {
  const caller = principalCaller(request);
  if (caller.trace) caller.trace.spender = caller.key;
  return caller;
}
