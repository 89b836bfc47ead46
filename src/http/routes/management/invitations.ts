import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { invitationStatus, type Invitation } from '../../../features/accounts/invitations.ts';
import type { InvitationsService } from '../../../features/accounts/invitations-service.ts';
import type { Clock } from '../../../lib/clock.ts';
import { decodeIdCursor, pageOf } from '../../../storage/id-cursor.ts';
import { actorOf, iso, pageQuery } from './actor.ts';
import { startSession } from './auth.ts';
import { userView } from './views.ts';

const invitationBody = z.object({ email: z.email().max(320), role: z.enum(['owner', 'admin', 'member']) });
const acceptBody = z.object({ name: z.string().trim().min(1).max(200), password: z.string().max(512) });
const orgParams = z.object({ id: z.string().min(1).max(200) });
const invitationParams = z.object({ id: z.string().min(1).max(200), invitationId: z.string().min(1).max(200) });
const tokenParams = z.object({ token: z.string().min(1).max(200) });

/** POST/GET /api/v1/orgs/:id/invitations, DELETE …/:invitationId, POST /api/v1/invitations/:token/accept (DESIGN §10). */
export function registerInvitationRoutes(app: FastifyInstance, services: { invitations: InvitationsService; clock: Clock }, options: { secureCookies: boolean }): void {
  const { invitations, clock } = services;
  const view = (invitation: Invitation) => ({
    id: invitation.id,
    orgId: invitation.orgId,
    email: invitation.email,
    role: invitation.role,
    status: invitationStatus(invitation, clock.now()),
    invitedBy: invitation.invitedBy,
    createdAt: iso(invitation.createdAt),
    expiresAt: iso(invitation.expiresAt),
    acceptedAt: iso(invitation.acceptedAt),
  });

  app.post('/api/v1/orgs/:id/invitations', { config: { auth: 'user', name: 'invitations.create', doc: { summary: 'Invite someone to an org by email', params: orgParams, body: invitationBody } } }, async (request) => {
    const { id } = parseOrThrow(orgParams, request.params);
    const body = parseOrThrow(invitationBody, request.body);
    const created = await invitations.create(actorOf(request), id, body);
    return { ...view(created.invitation), token: created.token, url: created.url };
  });

  app.get('/api/v1/orgs/:id/invitations', { config: { auth: 'user', name: 'invitations.list', doc: { summary: 'An org\'s pending invitations', params: orgParams, query: pageQuery, list: true } } }, async (request) => {
    const { id } = parseOrThrow(orgParams, request.params);
    const query = parseOrThrow(pageQuery, request.query);
    const rows = await invitations.list(actorOf(request).id, id, query.limit + 1, decodeIdCursor(query.cursor));
    const page = pageOf(rows, query.limit);
    return { object: 'list', data: page.items.map(view), next_cursor: page.nextCursor };
  });

  app.delete('/api/v1/orgs/:id/invitations/:invitationId', { config: { auth: 'user', name: 'invitations.revoke', doc: { summary: 'Revoke an invitation', params: invitationParams } } }, async (request) => {
    const { id, invitationId } = parseOrThrow(invitationParams, request.params);
    return view(await invitations.revoke(actorOf(request), id, invitationId));
  });

  // Signed in (cookie or management key): joins that user. Anonymous with {name, password}: signs up with the invited email.
  app.post('/api/v1/invitations/:token/accept', { config: { auth: 'optionalUser', name: 'invitations.accept', doc: { summary: 'Accept an invitation, signed in or as a new user (name and password)', params: tokenParams, body: acceptBody } } }, async (request, reply) => {
    const { token } = parseOrThrow(tokenParams, request.params);
    const principal = request.principal;
    const input = principal ? { user: principal.user, ip: request.ip } : { newUser: parseOrThrow(acceptBody, request.body ?? {}), ip: request.ip };
    const accepted = await invitations.accept(token, input);
    const joined = { orgId: accepted.invitation.orgId, role: accepted.role };
    if (accepted.signedIn) return { ...startSession(reply, accepted.signedIn, options.secureCookies), ...joined };
    return { user: userView(accepted.user), ...joined };
  });
}
