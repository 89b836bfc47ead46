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

const mePatch = z.object({
  name: z.string().min(1).max(200).optional(),
  password: z.object({ current: z.string().min(1).max(512), new: z.string().min(1).max(512) }).optional(),
});

export const principalOf = (request: FastifyRequest): Principal => {
  if (!request.principal) throw unauthorized();
  return request.principal;
};

/** GET/PATCH /api/v1/me and GET /api/v1/key (any key, about itself). */
export function registerMeRoutes(app: FastifyInstance, services: { accounts: AccountsService; sessions: SessionsService; keys: KeysService }): void {
  const { accounts } = services;
  const me = async (principal: Principal) => {
    const user = (await accounts.getUser(principal.user.id)) ?? principal.user;
    const balance = (await accounts.balance({ type: 'user', id: user.id })) ?? user.balance;
    return { ...userView({ ...user, balance }), orgs: await accounts.orgsOf(user.id) };
  };

  app.get('/api/v1/me', { config: { auth: 'user', name: 'me', doc: { summary: 'You: profile, balance and orgs' } } }, async (request) => me(principalOf(request)));

  app.patch('/api/v1/me', { config: { auth: 'user', name: 'me.update', doc: { summary: 'Change your name or password', body: mePatch } } }, async (request) => {
    const principal = principalOf(request);
    const body = parseOrThrow(mePatch, request.body ?? {});
    await accounts.updateProfile(principal.user.id, body);
    // A new password signs out every other browser of the user.
    if (body.password) await services.sessions.endOtherSessions(principal.user.id, principal.session);
    return me(principal);
  });

  app.get('/api/v1/key', { config: { auth: 'anyKey', name: 'key.self', doc: { summary: 'The key you call with: its limits, spend and balance' } } }, async (request) => {
    const key = request.apiKey && (await services.keys.get(request.apiKey.id));
    if (!key) throw unauthorized();
    const payer = key.orgId ? { type: 'org' as const, id: key.orgId } : { type: 'user' as const, id: key.userId };
    const balance = await accounts.balance(payer);
    return { ...keyDetailsView(await services.keys.details(key)), balance: balance === undefined ? null : formatMoney(balance) };
  });
}
