import type { NewUser, Role } from './accounts.ts';

/** An invitation to join an org with a role. The token is shown once, in the invitation's URL; only its SHA-256 is stored. */
export interface Invitation {
  id: string;
  orgId: string;
  /** Lower-case; only a user with this email may accept. */
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedBy: string | null;
  revokedAt: number | null;
}

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

export function invitationStatus(invitation: Invitation, now: number): InvitationStatus {
  if (invitation.acceptedAt !== null) return 'accepted';
  if (invitation.revokedAt !== null) return 'revoked';
  return invitation.expiresAt <= now ? 'expired' : 'pending';
}

/** Who accepts: a user who exists (signed in), or a new user created with the invitation's email. */
export type Acceptor = { userId: string; newUser?: undefined } | { userId: string; newUser: NewUser };

/** `unavailable`: already accepted, revoked or expired by the time the claim ran (a concurrent accept won). */
export type AcceptOutcome = 'accepted' | 'unavailable' | 'already_member';

export interface InvitationsRepository {
  insert(invitation: Invitation, tokenHash: string): Promise<void>;
  get(id: string): Promise<Invitation | undefined>;
  byTokenHash(tokenHash: string): Promise<Invitation | undefined>;
  /** The org's invitations, newest first, after the cursor's one. */
  list(orgId: string, limit: number, after: string | undefined): Promise<Invitation[]>;
  /** Revokes a pending invitation; false when it was accepted or revoked meanwhile. */
  revoke(id: string, now: number): Promise<boolean>;
  /**
   * In one transaction: claims the invitation if it is still pending, creates the new user if there is one (a taken email
   * throws 409 and undoes the claim), and adds the membership. Two accepts of one token give one member.
   */
  accept(invitation: Invitation, acceptor: Acceptor, now: number): Promise<AcceptOutcome>;
}
