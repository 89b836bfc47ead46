import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { unauthorized } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import type { SessionsService } from '../../../features/accounts/sessions-service.ts';
import type { KeysService } from '../../../features/keys/keys-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import type { Principal } from '../../context.ts';
import { keyDetailsView, userView } from './views.ts';
import { moneyInput } from '../admin/admin-schemas.ts';
import type { EmailChangeService } from '../../../features/accounts/email-change-service.ts';
import { actorOf, iso } from './actor.ts';

const mePatch = z.object({
  name: z.string().min(1).max(200).optional(),
  password: z.object({ current: z.string().min(1).max(512), new: z.string().min(1).max(512) }).optional(),
  /** A new sign-in email: mailed a confirmation link, changed only when it is opened (needs `currentPassword`). */
  email: z.email().max(320).optional(),
  currentPassword: z.string().min(1).max(512).optional(),
  lowBalanceAlert: moneyInput.nullable().optional(),
});

export const principalOf = (request: FastifyRequest): Principal => {
  if (!request.principal) throw unauthorized();
  return request.principal;
};

/** GET/PATCH /api/v1/me and GET /api/v1/key (any key, about itself). */
export function registerMeRoutes(app: FastifyInstance, services: { accounts: AccountsService; sessions: SessionsService; keys: KeysService; emailChange: EmailChangeService }): void {
  const { accounts } = services;
  const me = async (principal: Principal) => {
    const user = (await accounts.getUser(principal.user.id)) ?? principal.user;
    const balance = (await accounts.balance({ type: 'user', id: user.id })) ?? user.balance;
    const lowBalanceAlert = await accounts.lowBalanceAlert({ type: 'user', id: user.id });
    return { ...userView({ ...user, balance }), lowBalanceAlert: lowBalanceAlert === null ? null : formatMoney(lowBalanceAlert), orgs: await accounts.orgsOf(user.id) };
  };

  app.get('/api/v1/me', { config: { auth: 'user', name: 'me', doc: { summary: 'You: profile, balance and orgs' } } }, async (request) => me(principalOf(request)));

  app.patch('/api/v1/me', { config: { auth: 'user', name: 'me.update', doc: { summary: 'Change your name, password, email or low-balance alert', body: mePatch } } }, async (request) => {
    const principal = principalOf(request);
    const body = parseOrThrow(mePatch, request.body ?? {});
    // The email first: a wrong current password or a taken address changes nothing else.
    const emailChange = body.email === undefined ? undefined : await services.emailChange.request(actorOf(request), { email: body.email, currentPassword: body.currentPassword });
    await accounts.updateProfile(principal.user.id, { name: body.name, password: body.password, lowBalanceAlert: body.lowBalanceAlert });
    // A new password signs out every other browser of the user.
    if (body.password) await services.sessions.endOtherSessions(principal.user.id, principal.session);
    return { ...(await me(principal)), ...(emailChange ? { emailChange: { email: emailChange.email, expiresAt: iso(emailChange.expiresAt) } } : {}) };
  });

  app.get('/api/v1/key', { config: { auth: 'anyKey', name: 'key.self', doc: { summary: 'The key you call with: its limits, spend and balance' } } }, async (request) => {
    const key = request.apiKey && (await services.keys.get(request.apiKey.id));
    if (!key) throw unauthorized();
    const payer = key.orgId ? { type: 'org' as const, id: key.orgId } : { type: 'user' as const, id: key.userId };
    const balance = await accounts.balance(payer);
    return { ...keyDetailsView(await services.keys.details(key)), balance: balance === undefined ? null : formatMoney(balance) };
  });
}
