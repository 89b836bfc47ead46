import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { formatMoney } from '../../../lib/money.ts';
import { accountOf, accountQuery, moneyInput } from './admin-schemas.ts';
import { orgView } from './orgs.ts';
import { adminActor } from '../../actors.ts';


const userBody = z.object({
  name: z.string().min(1).max(200),
  balance: moneyInput.optional(),
  email: z.email().max(320).optional(),
  password: z.string().max(512).optional(),
  operator: z.boolean().optional(),
});
const orgBody = z.object({ name: z.string().min(1).max(200), ownerId: z.string().min(1), balance: moneyInput.optional(), promptCaching: z.boolean().optional() });
const orgPatch = z.object({ name: z.string().min(1).max(200).optional(), promptCaching: z.boolean().optional() });
const memberBody = z.object({ userId: z.string().min(1), role: z.enum(['owner', 'admin', 'member']) });
const balanceBody = z.object({ userId: z.string().min(1).optional(), orgId: z.string().min(1).optional(), amount: moneyInput, note: z.string().max(500).optional(), description: z.string().max(500).optional() });
const idempotencyHeader = z.string().min(1).max(200).optional();

/** Users, organisations, members, balances and the ledger (DESIGN §4). */
export function registerAccountRoutes(app: FastifyInstance, services: { accounts: AccountsService }): void {
  const { accounts } = services;

  app.post('/admin/v1/users', { config: { doc: { summary: 'Create a user', body: userBody } } }, async (request) => {
    const body = parseOrThrow(userBody, request.body);
    const user = await accounts.createUser(body.name, body.balance ?? 0n, {
      ...(body.email !== undefined ? { email: body.email } : {}),
      ...(body.password !== undefined ? { password: body.password } : {}),
      ...(body.operator !== undefined ? { operator: body.operator } : {}),
    }, adminActor(request));
    return { id: user.id, name: user.name, balance: formatMoney(user.balance), email: user.email, operator: user.operator };
  });

  app.post('/admin/v1/orgs', { config: { doc: { summary: 'Create an org', body: orgBody } } }, async (request) => {
    const body = parseOrThrow(orgBody, request.body);
    return orgView(await accounts.createOrg(body, adminActor(request)));
  });

  app.patch('/admin/v1/orgs/:id', { config: { doc: { summary: 'Change an org', body: orgPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    return orgView(await accounts.updateOrg(id, parseOrThrow(orgPatch, request.body ?? {}), adminActor(request)));
  });

  app.post('/admin/v1/orgs/:id/members', { config: { doc: { summary: 'Add a member to an org or change their role', body: memberBody } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(memberBody, request.body);
    await accounts.addMember(id, body.userId, body.role, adminActor(request));
    return { ok: true };
  });

  app.post('/admin/v1/balance', { config: { doc: { summary: 'Credit or debit a balance (Idempotency-Key header honoured)', body: balanceBody } } }, async (request) => {
    const body = parseOrThrow(balanceBody, request.body);
    const account = accountOf(parseOrThrow(accountQuery, { userId: body.userId, orgId: body.orgId }));
    const note = body.note ?? body.description ?? (body.amount >= 0n ? 'admin credit' : 'admin debit');
    const idempotencyKey = parseOrThrow(idempotencyHeader, request.headers['idempotency-key']);
    const balance = await accounts.adjust(account, body.amount, note, idempotencyKey, adminActor(request));
    return { balance: formatMoney(balance) };
  });

  app.get('/admin/v1/balance', { config: { doc: { summary: 'A user\'s or org\'s balance', query: accountQuery } } }, async (request) => {
    const account = accountOf(parseOrThrow(accountQuery, request.query));
    const balance = await accounts.balance(account);
    if (balance === undefined) throw new GatewayError('not_found', `No such ${account.type === 'user' ? 'user' : 'organization'} '${account.id}'.`);
    return { balance: formatMoney(balance) };
  });

  app.get('/admin/v1/ledger', { config: { doc: { summary: 'A user\'s or org\'s ledger', query: accountQuery, list: true } } }, async (request) => {
    const account = accountOf(parseOrThrow(accountQuery, request.query));
    const entries = await accounts.entries(account);
    return {
      object: 'list',
      data: entries.map((entry) => ({
        id: entry.id,
        amount: formatMoney(entry.amount),
        kind: entry.kind,
        requestId: entry.requestId,
        model: entry.model,
        keyId: entry.keyId ?? null,
        // `note` is DESIGN §10's name for it; `description` stays for existing clients.
        note: entry.description,
        description: entry.description,
        createdAt: new Date(entry.createdAt).toISOString(),
      })),
    };
  });
}
