import type { FastifyInstance } from 'fastify';
import type { Services } from '../../app.ts';
import { unauthorized } from '../../core/errors.ts';
import { constantTimeEqual } from '../../lib/hashing.ts';
import { keyText } from '../plugins/auth.ts';

export function registerHealthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { auth: 'none', name: 'healthz' } }, async () => ({ ok: true }));
  // Clients probe the root before they talk to the API.
  app.head('/', { config: { auth: 'none', name: 'root' } }, async (_request, reply) => reply.code(200).send());
  app.get('/metrics', { config: { auth: 'none', name: 'metrics' } }, async (request, reply) => {
    const token = services.config.metricsToken;
    if (token !== undefined) {
      const given = keyText(request);
      if (given === undefined || !constantTimeEqual(given, token)) throw unauthorized();
    }
    reply.type(services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
  });
}
