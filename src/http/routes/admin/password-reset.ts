import type { FastifyInstance } from 'fastify';
import type { PasswordResetService } from '../../../features/accounts/password-reset-service.ts';
import { adminActor } from '../../actors.ts';

/** POST /admin/v1/users/:id/password-reset: a reset link the operator hands over (no mail needed), audited. */
export function registerPasswordResetRoute(app: FastifyInstance, passwordReset: PasswordResetService): void {
  app.post('/admin/v1/users/:id/password-reset', { config: { doc: { summary: 'A password-reset link for a user (no mail needed)' } } }, async (request) => {
    const { id } = request.params as { id: string };
    const link = await passwordReset.issueLink(id, adminActor(request));
    return { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() };
  });
}
