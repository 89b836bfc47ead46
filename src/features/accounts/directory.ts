import type { Org, Role, User } from './accounts.ts';

/** `?query=&limit=&cursor=` of the operator's lists; `query` matches name, email (users) or id. */
export interface DirectoryQuery {
  query?: string;
  limit: number;
  cursor?: string;
}

export interface Member {
  userId: string;
  name: string;
  email: string | null;
  role: Role;
}

/** Why an account was not deleted: it does not exist, or money or history refers to it (it is kept; DESIGN §4). */
export type DeleteOutcome = 'deleted' | 'missing' | 'in_use';

/** The operator's view over every account: lists, members, and deleting accounts that never did anything. */
export interface AccountsDirectory {
  /** Newest first. */
  listUsers(query: DirectoryQuery): Promise<{ users: User[]; nextCursor: string | undefined }>;
  listOrgs(query: DirectoryQuery): Promise<{ orgs: Org[]; nextCursor: string | undefined }>;
  members(orgId: string): Promise<Member[]>;
  /** Deletes the user (and their sessions) only when no ledger entry, key, membership, task, assistant or bot refers to them. */
  deleteUser(id: string): Promise<DeleteOutcome>;
  /** Deletes the org only when no ledger entry, key, assistant or bot refers to it and its owner is its only member. */
  deleteOrg(id: string): Promise<DeleteOutcome>;
}
