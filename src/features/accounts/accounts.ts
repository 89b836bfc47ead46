import type { Money } from '../../lib/money.ts';

export type Role = 'owner' | 'admin' | 'member';
export const ROLES: readonly Role[] = ['owner', 'admin', 'member'];

export interface User {
  id: string;
  name: string;
  balance: Money;
  /** Lower-case; null for a user who cannot sign in. */
  email: string | null;
  /** Signs in to the operator pages of the console. */
  operator: boolean;
}

export interface NewUser {
  id: string;
  name: string;
  email?: string | null;
  passwordHash?: string | null;
  operator?: boolean;
}

export interface Org {
  id: string;
  name: string;
  ownerId: string;
  balance: Money;
  /** Prompt caching for the org's business keys (SPEC 4.2): off by default. */
  promptCaching: boolean;
}

/** A member as the org's people see them. */
export interface OrgMember {
  userId: string;
  email: string | null;
  name: string;
  role: Role;
}

/** A new role, or `null` to end the membership (leave or removal). */
export interface MemberChange {
  role: Role | null;
}

/** `last_owner`: refused, the org would have no owner left. */
export type MemberChangeOutcome = 'changed' | 'not_member' | 'last_owner';

/** The account a charge goes to. */
export interface AccountRef {
  type: 'user' | 'org';
  id: string;
}

export interface AccountsRepository {
  /** Throws `conflict` when the email is taken. */
  createUser(user: NewUser, createdAt: number): Promise<void>;
  getUser(id: string): Promise<User | undefined>;
  /** The user with this (lower-case) email and the password hash to check. */
  findByEmail(email: string): Promise<{ user: User; passwordHash: string | null } | undefined>;
  passwordHash(userId: string): Promise<string | null | undefined>;
  updateUser(id: string, changes: { name?: string; passwordHash?: string; email?: string | null; operator?: boolean }): Promise<void>;
  createOrg(org: { id: string; name: string; ownerId: string; promptCaching: boolean }, createdAt: number): Promise<void>;
  getOrg(id: string): Promise<Org | undefined>;
  updateOrg(id: string, changes: { name?: string; promptCaching?: boolean }): Promise<Org | undefined>;
  setMember(orgId: string, userId: string, role: Role): Promise<void>;
  getRole(orgId: string, userId: string): Promise<Role | undefined>;
  countUsers(): Promise<number>;
  /** The org's members with their names and emails, in a stable order. */
  members(orgId: string): Promise<OrgMember[]>;
  /** Changes a role or ends a membership, atomically refusing to leave the org without an owner. */
  changeMember(orgId: string, userId: string, change: MemberChange): Promise<MemberChangeOutcome>;
  /** The account's low-balance threshold (DESIGN §15); null for none, undefined for an unknown account. */
  lowBalanceAlert(account: AccountRef): Promise<Money | null | undefined>;
  setLowBalanceAlert(account: AccountRef, threshold: Money | null): Promise<void>;
  /** Organisations the user belongs to, with the user's role in each. */
  membershipsOf(userId: string): Promise<Array<{ orgId: string; role: Role }>>;
}
