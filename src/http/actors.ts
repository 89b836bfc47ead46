import type { FastifyRequest } from 'fastify';
import type { Actor } from '../features/audit/audit.ts';

/** The admin token's caller, with the address the request came from (DESIGN §4: the audit log keeps the ip). */
export const adminActor = (request: FastifyRequest): Actor => ({ type: 'admin', id: null, ip: request.ip });

/** A signed-in user or a management key's owner. */
export const userActor = (request: FastifyRequest, userId: string): Actor => ({ type: 'user', id: userId, ip: request.ip });
