import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Actor } from '../../../features/audit/audit.ts';
import { principalOf } from './me.ts';

/** The signed-in user (or management key's owner) as the audit log names them, with the client's address. */
export const actorOf = (request: FastifyRequest): Actor & { id: string } => ({ type: 'user', id: principalOf(request).user.id, ip: request.ip });

/** `?limit=&cursor=` of every management list (`{object: "list", data, next_cursor}`). */
export const pageQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().min(1).max(400).optional(),
});

export const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
