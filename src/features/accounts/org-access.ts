import { GatewayError } from '../../core/errors.ts';
import type { Role } from './accounts.ts';

/** What a caller needs in an org: to belong to it, or to run it (owner or admin). */
export type OrgNeed = 'member' | 'manager';

export const orgNotFound = (orgId: string): GatewayError => new GatewayError('not_found', `Organization '${orgId}' does not exist.`);

export const isManager = (role: Role): boolean => role === 'owner' || role === 'admin';

/**
 * The caller's role in an org, or the error the management API owes: a non-member learns nothing (404, as if the org did not
 * exist); a member where an owner or admin is needed gets 403.
 */
export async function requireRole(accounts: { getRole(orgId: string, userId: string): Promise<Role | undefined> }, orgId: string, userId: string, need: OrgNeed): Promise<Role> {
  const role = await accounts.getRole(orgId, userId);
  if (!role) throw orgNotFound(orgId);
  if (need === 'manager' && !isManager(role)) throw new GatewayError('forbidden', 'Only an owner or admin of the organization may do this.');
  return role;
}

/** Only an owner hands out, changes or takes away the owner role. */
export function requireOwnerFor(callerRole: Role, roles: ReadonlyArray<Role | undefined>): void {
  if (callerRole !== 'owner' && roles.includes('owner')) throw new GatewayError('forbidden', 'Only an owner of the organization may give, change or remove the owner role.');
}
