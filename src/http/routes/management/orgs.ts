import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { AccountsService } from '../../../features/accounts/accounts-service.ts';
import type { OrgDetails, OrgsService } from '../../../features/accounts/orgs-service.ts';
import type { OrgMember } from '../../../features/accounts/accounts.ts';
import { formatMoney } from '../../../lib/money.ts';
import { actorOf } from './actor.ts';
import { principalOf } from './me.ts';
import { moneyInput } from '../admin/admin-schemas.ts';

const orgName = z.string().trim().min(1).max(200);
const orgCreate = z.object({ name: orgName });
const orgPatch = z.object({ name: orgName.optional(), promptCaching: z.boolean().optional(), lowBalanceAlert: moneyInput.nullable().optional() });
const rolePatch = z.object({ role: z.enum(['owner', 'admin', 'member']) });
const orgParams = z.object({ id: z.string().min(1).max(200) });
const memberParams = z.object({ id: z.string().min(1).max(200), userId: z.string().min(1).max(200) });

export const memberView = (member: OrgMember) => ({ id: member.userId, email: member.email, name: member.name, role: member.role });

const orgView = ({ org, role, members, lowBalanceAlert }: OrgDetails) => ({
  id: org.id,
  name: org.name,
  balance: formatMoney(org.balance),
  promptCaching: org.promptCaching,
  lowBalanceAlert: lowBalanceAlert === null ? null : formatMoney(lowBalanceAlert),
  role,
  members: members.map(memberView),
});

/** GET/POST /api/v1/orgs, GET/PATCH /api/v1/orgs/:id, PATCH/DELETE /api/v1/orgs/:id/members/:userId (DESIGN §10). */
export function registerOrgRoutes(app: FastifyInstance, services: { orgs: OrgsService; accounts: Pick<AccountsService, 'orgsOf'> }): void {
  const { orgs } = services;

  app.get('/api/v1/orgs', { config: { auth: 'user', name: 'orgs.list', doc: { summary: 'The orgs you belong to', list: true } } }, async (request) => {
    const data = await services.accounts.orgsOf(principalOf(request).user.id);
    return { object: 'list', data, next_cursor: null };
  });

  app.post('/api/v1/orgs', { config: { auth: 'user', name: 'orgs.create', doc: { summary: 'Create an org (you become its owner)', body: orgCreate } } }, async (request) => {
    const body = parseOrThrow(orgCreate, request.body);
    return orgView(await orgs.create(actorOf(request), body.name));
  });

  app.get('/api/v1/orgs/:id', { config: { auth: 'user', name: 'orgs.get', doc: { summary: 'An org with its members', params: orgParams } } }, async (request) => {
    const { id } = parseOrThrow(orgParams, request.params);
    return orgView(await orgs.details(principalOf(request).user.id, id));
  });

  app.patch('/api/v1/orgs/:id', { config: { auth: 'user', name: 'orgs.update', doc: { summary: 'Rename an org or set its prompt caching', params: orgParams, body: orgPatch } } }, async (request) => {
    const { id } = parseOrThrow(orgParams, request.params);
    const body = parseOrThrow(orgPatch, request.body ?? {});
    return orgView(await orgs.update(actorOf(request), id, body));
  });

  app.patch('/api/v1/orgs/:id/members/:userId', { config: { auth: 'user', name: 'orgs.members.update', doc: { summary: 'Change a member\'s role', params: memberParams, body: rolePatch } } }, async (request) => {
    const { id, userId } = parseOrThrow(memberParams, request.params);
    const body = parseOrThrow(rolePatch, request.body);
    return memberView(await orgs.changeRole(actorOf(request), id, userId, body.role));
  });

  app.delete('/api/v1/orgs/:id/members/:userId', { config: { auth: 'user', name: 'orgs.members.remove', doc: { summary: 'Remove a member (their org keys and bots are revoked)', params: memberParams } } }, async (request) => {
    const { id, userId } = parseOrThrow(memberParams, request.params);
    return { ...memberView(await orgs.removeMember(actorOf(request), id, userId)), deleted: true };
  });
}
