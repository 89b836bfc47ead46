import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { EmailChangeService } from '../../../features/accounts/email-change-service.ts';
import type { PasswordResetService } from '../../../features/accounts/password-reset-service.ts';
import { iso } from './actor.ts';

const resetRequestBody = z.object({ email: z.string().trim().min(1).max(320) });
const resetConfirmBody = z.object({ token: z.string().min(1).max(200), password: z.string().max(512) });
const tokenParams = z.object({ token: z.string().min(1).max(200) });
const emailConfirmBody = z.object({ token: z.string().min(1).max(200) });

/**
 * The single-use links that mail carries (DESIGN §15): password reset (ask, check, confirm) and the confirmation of a new
 * email. None needs a session: the link is the credential.
 */
export function registerAccountLinkRoutes(app: FastifyInstance, services: { passwordReset: PasswordResetService; emailChange: EmailChangeService }): void {
  const { passwordReset, emailChange } = services;

  // The same answer whether or not the address has an account (only the throttle answers otherwise, for every address).
  app.post('/api/v1/auth/password-reset', { config: { auth: 'none', name: 'auth.password_reset', doc: { summary: 'Mail a password-reset link (same answer for unknown addresses)', body: resetRequestBody } } }, async (request) => {
    const body = parseOrThrow(resetRequestBody, request.body);
    await passwordReset.request(body.email, request.ip);
    return { ok: true };
  });

  // The console's reset page asks whether its link still works before showing the form; asking does not use the link.
  app.get('/api/v1/auth/password-reset/:token', { config: { auth: 'none', name: 'auth.password_reset.check', doc: { summary: 'Whether a reset link is still good (does not use it)', params: tokenParams } } }, async (request) => {
    const { token } = parseOrThrow(tokenParams, request.params);
    const { expiresAt } = await passwordReset.check(token);
    return { valid: true, expiresAt: iso(expiresAt) };
  });

  app.post('/api/v1/auth/password-reset/confirm', { config: { auth: 'none', name: 'auth.password_reset.confirm', doc: { summary: 'Set a new password with a reset link (once)', body: resetConfirmBody } } }, async (request) => {
    const body = parseOrThrow(resetConfirmBody, request.body);
    await passwordReset.confirm(body.token, body.password, request.ip);
    return { ok: true };
  });

  app.post('/api/v1/auth/email-change/confirm', { config: { auth: 'none', name: 'auth.email_change.confirm', doc: { summary: 'Confirm an email change with its mailed link', body: emailConfirmBody } } }, async (request) => {
    const body = parseOrThrow(emailConfirmBody, request.body);
    const changed = await emailChange.confirm(body.token, request.ip);
    return { ok: true, email: changed.email };
  });
}
