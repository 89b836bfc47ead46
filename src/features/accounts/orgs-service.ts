import { GatewayError } from '../../core/errors.ts';
import type { Actor } from '../audit/audit.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { AccountsService } from './accounts-service.ts';
import type { AccountsRepository, Org, OrgMember, Role } from './accounts.ts';
import type { Money } from '../../lib/money.ts';
import { requireOwnerFor, requireRole } from './org-access.ts';

/** An org as its members see it: settings, the balance after pending charges, the caller's role and the member list. */
export interface OrgDetails {
  org: Org;
  role: Role;
  members: OrgMember[];
  /** Below this balance a debit mails the owners (DESIGN §15); null for no alert. */
  lowBalanceAlert: Money | null;
}

/** Called after a membership ended, so what the member ran on the org's money (bots, keys) stops with it. */
export type MemberRemovedListener = (orgId: string, userId: string) => Promise<void>;

const memberNotFound = (userId: string): GatewayError => new GatewayError('not_found', `User '${userId}' is not a member of this organization.`);

/**
 * Organisations run by their own people (DESIGN §10): members read the org, owners and admins change its settings and members,
 * only an owner touches the owner role, and the last owner stays. Every change is audited with the org's id.
 */
export class OrgsService {
  private readonly memberRemovedListeners: MemberRemovedListener[] = [];

  constructor(
    private readonly accounts: AccountsService,
    private readonly repository: Pick<AccountsRepository, 'members' | 'changeMember'>,
    private readonly audit: AuditService,
  ) {}

  onMemberRemoved(listener: MemberRemovedListener): void {
    this.memberRemovedListeners.push(listener);
  }

  /** Any member may read the org; anyone else gets 404. */
  async details(userId: string, orgId: string): Promise<OrgDetails> {
    const role = await requireRole(this.accounts, orgId, userId, 'member');
    const org = await this.accounts.getOrg(orgId);
    if (!org) throw new GatewayError('not_found', `Organization '${orgId}' does not exist.`);
    const balance = (await this.accounts.balance({ type: 'org', id: orgId })) ?? org.balance;
    const lowBalanceAlert = await this.accounts.lowBalanceAlert({ type: 'org', id: orgId });
    return { org: { ...org, balance }, role, members: await this.repository.members(orgId), lowBalanceAlert };
  }

  /** A user starts an organisation of their own and owns it (as on OpenRouter); it starts with no balance. */
  async create(actor: Actor & { id: string }, name: string): Promise<OrgDetails> {
    // AccountsService records the creation with this actor: every door leaves one audit entry.
    const org = await this.accounts.createOrg({ name, ownerId: actor.id }, actor);
    return this.details(actor.id, org.id);
  }

  /** Name and prompt caching (SPEC 4.2 rule 3): owners and admins only; business keys follow the new setting at once. */
  async update(
    actor: Actor & { id: string },
    orgId: string,
    changes: { name?: string | undefined; promptCaching?: boolean | undefined; lowBalanceAlert?: Money | null | undefined },
  ): Promise<OrgDetails> {
    await requireRole(this.accounts, orgId, actor.id, 'manager');
    if (changes.lowBalanceAlert !== undefined) await this.accounts.setLowBalanceAlert({ type: 'org', id: orgId }, changes.lowBalanceAlert, actor);
    await this.accounts.updateOrg(
      orgId,
      {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.promptCaching !== undefined ? { promptCaching: changes.promptCaching } : {}),
      },
      actor,
    );
    return this.details(actor.id, orgId);
  }

  /** Owners and admins change roles; only an owner changes an owner or makes one; the last owner is not demoted (409). */
  async changeRole(actor: Actor & { id: string }, orgId: string, userId: string, role: Role): Promise<OrgMember> {
    const callerRole = await requireRole(this.accounts, orgId, actor.id, 'manager');
    const current = await this.accounts.getRole(orgId, userId);
    if (!current) throw memberNotFound(userId);
    requireOwnerFor(callerRole, [current, role]);
    return this.setRole(actor, orgId, userId, current, role);
  }

  /**
   * Ends a membership: any member may leave; owners and admins remove others (only an owner removes an owner); the last owner
   * can neither leave nor be removed (409). Returns the member as they were.
   */
  async removeMember(actor: Actor & { id: string }, orgId: string, userId: string): Promise<OrgMember> {
    const leaving = userId === actor.id;
    const callerRole = await requireRole(this.accounts, orgId, actor.id, leaving ? 'member' : 'manager');
    const member = await this.member(orgId, userId);
    if (!leaving) requireOwnerFor(callerRole, [member.role]);
    return this.endMembership(actor, orgId, member, leaving ? 'member.leave' : 'member.remove');
  }

  /** The operator (admin API, CLI) changes any member's role; the org keeps its last owner (409), as at the owners' door. */
  async operatorChangeRole(actor: Actor, orgId: string, userId: string, role: Role): Promise<OrgMember> {
    await this.requireOrg(orgId);
    const current = await this.accounts.getRole(orgId, userId);
    if (!current) throw memberNotFound(userId);
    return this.setRole(actor, orgId, userId, current, role);
  }

  /** The operator removes any member; the last owner stays (409); what the member ran on the org's money stops with it. */
  async operatorRemoveMember(actor: Actor, orgId: string, userId: string): Promise<OrgMember> {
    await this.requireOrg(orgId);
    return this.endMembership(actor, orgId, await this.member(orgId, userId), 'member.remove');
  }

  private async setRole(actor: Actor, orgId: string, userId: string, current: Role, role: Role): Promise<OrgMember> {
    await this.apply(orgId, userId, role);
    await this.audit.record(actor, 'member.update', { type: 'user', id: userId }, { before: { role: current }, after: { role }, orgId });
    return this.member(orgId, userId);
  }

  private async endMembership(actor: Actor, orgId: string, member: OrgMember, action: 'member.leave' | 'member.remove'): Promise<OrgMember> {
    await this.apply(orgId, member.userId, null);
    await this.audit.record(actor, action, { type: 'user', id: member.userId }, { before: { role: member.role }, after: null, orgId });
    for (const listener of this.memberRemovedListeners) await listener(orgId, member.userId);
    return member;
  }

  private async requireOrg(orgId: string): Promise<void> {
    if (!(await this.accounts.getOrg(orgId))) throw new GatewayError('not_found', `Organization '${orgId}' does not exist.`);
  }

  private async apply(orgId: string, userId: string, role: Role | null): Promise<void> {
    const outcome = await this.repository.changeMember(orgId, userId, { role });
    if (outcome === 'not_member') throw memberNotFound(userId);
    if (outcome === 'last_owner') {
      throw new GatewayError('conflict', 'The organization must keep an owner: make another member an owner first.', { codeA: 'last_owner' });
    }
  }

  private async member(orgId: string, userId: string): Promise<OrgMember> {
    const member = (await this.repository.members(orgId)).find((candidate) => candidate.userId === userId);
    if (!member) throw memberNotFound(userId);
    return member;
  }
}

