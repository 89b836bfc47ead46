import type { SignupMode } from '../../config/config.ts';
import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import { hashPassword } from '../../lib/passwords.ts';
import type { Actor } from '../audit/audit.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { MailOutbox } from '../mail/mail-outbox.ts';
import { invitationMail } from '../mail/templates.ts';
import { checkPassword, type AccountsService } from './accounts-service.ts';
import type { Role, User } from './accounts.ts';
import { invitationStatus, type Invitation, type InvitationsRepository } from './invitations.ts';
import { requireOwnerFor, requireRole } from './org-access.ts';
import type { SessionsService, SignedIn } from './sessions-service.ts';

/** DESIGN §10 leaves it open; 7 days is what GitHub and most consoles give an invitation. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

const invitationNotFound = (): GatewayError => new GatewayError('not_found', 'This invitation does not exist, was revoked or has expired.');

/** Who accepts: the signed-in user, or someone new who gives a name and a password (sign-up by invitation). */
export type AcceptInput = { user: User; ip: string | null } | { newUser: { name: string; password: string }; ip: string | null };

/**
 * Invitations to join an org: owners and admins invite by email with a role (only an owner invites an owner); the link's
 * token is single-use and expires; accepting either joins a signed-in user whose email matches, or, when sign-up allows it,
 * creates the user with the invited email and signs them in.
 */
export class InvitationsService {
  constructor(
    private readonly repository: InvitationsRepository,
    private readonly accounts: AccountsService,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly options: { signup: SignupMode; publicUrl: { base: string } },
    /** Mails the invitee the link (DESIGN §15); without a mail server the answer's `url` is for the inviter to pass on. */
    private readonly mail?: MailOutbox,
  ) {}

  async create(actor: Actor & { id: string }, orgId: string, input: { email: string; role: Role }): Promise<{ invitation: Invitation; token: string; url: string }> {
    const callerRole = await requireRole(this.accounts, orgId, actor.id, 'manager');
    requireOwnerFor(callerRole, [input.role]);
    const token = `tgi-${randomBase62(40)}`;
    const now = this.clock.now();
    const invitation: Invitation = {
      id: newId('invitation'),
      orgId,
      email: input.email.trim().toLowerCase(),
      role: input.role,
      invitedBy: actor.id,
      createdAt: now,
      expiresAt: now + INVITATION_TTL_MS,
      acceptedAt: null,
      acceptedBy: null,
      revokedAt: null,
    };
    await this.repository.insert(invitation, sha256Hex(token));
    await this.audit.record(actor, 'invitation.create', { type: 'invitation', id: invitation.id }, { after: { email: invitation.email, role: invitation.role }, orgId });
    const url = `${this.options.publicUrl.base.replace(/\/+$/, '')}/invite/${token}`;
    if (this.mail?.enabled) {
      const [org, inviter] = [await this.accounts.getOrg(orgId), await this.accounts.getUser(actor.id)];
      const content = invitationMail({ orgName: org?.name ?? orgId, inviter: inviter?.name ?? 'A member', role: invitation.role, url, expiresAt: invitation.expiresAt });
      await this.mail.queue({ kind: 'invitation', to: invitation.email, ...content });
    }
    return { invitation, token, url };
  }

  async list(userId: string, orgId: string, limit: number, after: string | undefined): Promise<Invitation[]> {
    await requireRole(this.accounts, orgId, userId, 'manager');
    return this.repository.list(orgId, limit, after);
  }

  /** Revokes a pending invitation (only an owner revokes an owner's invitation); an accepted one is a 409. */
  async revoke(actor: Actor & { id: string }, orgId: string, id: string): Promise<Invitation> {
    const callerRole = await requireRole(this.accounts, orgId, actor.id, 'manager');
    const invitation = await this.repository.get(id);
    if (!invitation || invitation.orgId !== orgId) throw new GatewayError('not_found', `Invitation '${id}' does not exist.`);
    requireOwnerFor(callerRole, [invitation.role]);
    if (invitation.acceptedAt !== null) throw new GatewayError('conflict', 'This invitation was already accepted; remove the member instead.');
    if (invitation.revokedAt === null && !(await this.repository.revoke(id, this.clock.now()))) {
      throw new GatewayError('conflict', 'This invitation was accepted meanwhile; remove the member instead.');
    }
    const revoked = (await this.repository.get(id))!;
    await this.audit.record(actor, 'invitation.revoke', { type: 'invitation', id }, { before: { status: invitationStatus(invitation, this.clock.now()) }, after: { status: 'revoked' }, orgId });
    return revoked;
  }

  /** The invitation behind a link's token, if it can still be accepted. */
  private async pending(token: string): Promise<Invitation> {
    const invitation = token.length <= 200 ? await this.repository.byTokenHash(sha256Hex(token)) : undefined;
    const status = invitation && invitationStatus(invitation, this.clock.now());
    if (!invitation || status === 'revoked' || status === 'expired') throw invitationNotFound();
    if (status === 'accepted') throw new GatewayError('conflict', 'This invitation was already accepted.', { codeA: 'invitation_used' });
    return invitation;
  }

  /**
   * Accepts an invitation once. A signed-in user must have the invited email (else 403). Someone new needs sign-up `invite` or
   * `open` (else 403) and an email nobody has registered (else 409: sign in, then accept); they are signed in as well.
   */
  async accept(token: string, input: AcceptInput): Promise<{ user: User; invitation: Invitation; role: Role; signedIn?: SignedIn & { token: string } }> {
    const invitation = await this.pending(token);
    let user: User;
    if ('user' in input) {
      user = input.user;
      if (user.email !== invitation.email) throw new GatewayError('forbidden', 'This invitation was sent to another email address.');
      this.settle(await this.repository.accept(invitation, { userId: user.id }, this.clock.now()));
    } else {
      if (this.options.signup === 'closed') throw new GatewayError('forbidden', 'Sign-up is closed: sign in with an account the operator made for you, then accept the invitation.', { codeA: 'signup_closed' });
      checkPassword(input.newUser.password);
      const newUser = { id: newId('user'), name: input.newUser.name, email: invitation.email, passwordHash: await hashPassword(input.newUser.password), operator: false };
      this.settle(await this.repository.accept(invitation, { userId: newUser.id, newUser }, this.clock.now()));
      user = (await this.accounts.getUser(newUser.id))!;
    }
    const actor: Actor = { type: 'user', id: user.id, ip: input.ip };
    await this.audit.record(actor, 'invitation.accept', { type: 'invitation', id: invitation.id }, { after: { userId: user.id, role: invitation.role }, orgId: invitation.orgId });
    const signedIn = 'newUser' in input ? await this.sessions.open(user) : undefined;
    return { user, invitation, role: invitation.role, ...(signedIn ? { signedIn } : {}) };
  }

  private settle(outcome: 'accepted' | 'unavailable' | 'already_member'): void {
    if (outcome === 'already_member') throw new GatewayError('conflict', 'You are already a member of this organization.', { codeA: 'already_member' });
    if (outcome === 'unavailable') throw new GatewayError('conflict', 'This invitation was already accepted.', { codeA: 'invitation_used' });
  }
}
