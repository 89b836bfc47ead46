import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import type { EmbeddingsService } from '../../features/inference/embeddings.ts';
import { callerOf, walletFromQuery } from '../caller.ts';

const embeddingsSchema = z.object({
  model: z.string().min(1, 'must not be empty'),
  input: z.union([
    z.string(),
    z.array(z.string()).min(1, 'must not be empty').max(2048),
    z.array(z.number().int()).min(1, 'must not be empty'),
    z.array(z.array(z.number().int()).min(1)).min(1, 'must not be empty').max(2048),
  ]),
  dimensions: z.number().int().positive().optional(),
  encoding_format: z.enum(['float', 'base64']).optional(),
  user: z.string().optional(),
  useWalletBalance: z.boolean().optional(),
});

/** POST /v1/embeddings (OpenAI format). */
export function registerEmbeddingsRoute(app: FastifyInstance, embeddings: EmbeddingsService): void {
  app.post('/v1/embeddings', { config: { name: 'embeddings', upstreamPassthrough: true, doc: { summary: 'Create embeddings (OpenAI format)', body: embeddingsSchema } } }, async (request, reply) => {
    const { useWalletBalance, ...body } = parseOrThrow(embeddingsSchema, request.body);
    const result = await embeddings.create(callerOf(request), body, useWalletBalance === true || walletFromQuery(request));
    reply.headers(result.headers);
    return result.body;
  });
}
