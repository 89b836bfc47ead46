import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import type { ModerationsService } from '../../features/inference/moderations.ts';
import { callerOf, walletFromQuery } from '../caller.ts';

/** SPEC 4.8: `input` (string, required) and `useWalletBalance`. */
const moderationSchema = z.object({
  input: z.string().min(1, 'must not be empty'),
  useWalletBalance: z.boolean().optional(),
});

export function registerModerationsRoute(app: FastifyInstance, moderations: ModerationsService): void {
  app.post('/v1/moderations', { config: { name: 'moderations', doc: { summary: 'Classify text (SPEC 4.8)', body: moderationSchema } } }, async (request, reply) => {
    const body = parseOrThrow(moderationSchema, request.body);
    const result = await moderations.create(callerOf(request), body.input, body.useWalletBalance === true || walletFromQuery(request));
    reply.headers(result.headers);
    return result.body;
  });
}
