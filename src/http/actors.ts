import type { FastifyRequest } from 'fastify';
import type { Actor } from '../features/audit/audit.ts';

/**
 * The admin API's caller, with the address the request came from (DESIGN §4: the audit log keeps the ip): the admin token, or an
 * operator signed in to the console (named, so the audit log says which operator did it).
 */
export const adminActor = (request: FastifyRequest): Actor =>
  request.principal ? { type: 'operator', id: request.principal.user.id, ip: request.ip } : { type: 'admin', id: null, ip: request.ip };

/** A signed-in user or a management key's owner. */
export const userActor = (request: FastifyRequest, userId: string): Actor => ({ type: 'user', id: userId, ip: request.ip });
