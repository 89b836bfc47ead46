import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { DirectoryService } from '../../../features/accounts/directory-service.ts';
import type { User } from '../../../features/accounts/accounts.ts';
import { formatMoney } from '../../../lib/money.ts';
import { adminActor } from '../../actors.ts';
import { listOf, listQuery } from './admin-schemas.ts';

const userPatch = z.object({
  name: z.string().min(1).max(200).optional(),
  email: z.email().max(320).nullable().optional(),
  password: z.string().max(512).optional(),
  operator: z.boolean().optional(),
});

/** A user as the operator sees it (never the password hash). */
export const adminUserView = (user: User) => ({ id: user.id, object: 'user' as const, name: user.name, email: user.email, operator: user.operator, balance: formatMoney(user.balance) });

/** GET /admin/v1/users (list), GET, PATCH and DELETE /admin/v1/users/:id (DESIGN §4). */
export function registerUserRoutes(app: FastifyInstance, directory: DirectoryService): void {
  app.get('/admin/v1/users', { config: { doc: { summary: 'List users', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const page = await directory.listUsers({ limit: query.limit, ...(query.query ? { query: query.query } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) });
    return listOf(page.users.map(adminUserView), page.nextCursor);
  });

  app.get('/admin/v1/users/:id', { config: { doc: { summary: 'One user' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return adminUserView(await directory.user(id));
  });

  app.patch('/admin/v1/users/:id', { config: { doc: { summary: 'Change a user (name, email, password, operator, disabled)', body: userPatch } } }, async (request) => {
    const { id } = request.params as { id: string };
    const body = parseOrThrow(userPatch, request.body ?? {});
    return adminUserView(await directory.updateUser(id, body, adminActor(request)));
  });

  app.delete('/admin/v1/users/:id', { config: { doc: { summary: 'Delete a user' } } }, async (request) => {
    const { id } = request.params as { id: string };
    await directory.deleteUser(id, adminActor(request));
    return { ok: true };
  });
}
