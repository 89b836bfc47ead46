import { GatewayError } from '../../core/errors.ts';
import type { ChangeBus } from '../../lib/change-bus.ts';
import { hashPassword } from '../../lib/passwords.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';
import { auditedOrg, auditedUser, checkPassword, type AccountsService } from './accounts-service.ts';
import type { AccountsRepository, Org, User } from './accounts.ts';
import type { AccountsDirectory, DeleteOutcome, DirectoryQuery, Member } from './directory.ts';
import type { SessionsService } from './sessions-service.ts';

const refused = (what: string, id: string, outcome: DeleteOutcome): GatewayError =>
  outcome === 'missing'
    ? new GatewayError('not_found', `${what} '${id}' does not exist.`)
    : new GatewayError('conflict', `${what} '${id}' has money or history (ledger entries, keys, members, bots, assistants or tasks) and is kept; revoke its keys instead.`);

/**
 * The operator's doors onto every account (admin API and CLI): lists, a user's sign-in details, and deleting accounts that
 * never did anything. An account with money or history is never hard-deleted (409): the ledger and the audit log must keep
 * naming it.
 */
export class DirectoryService {
  constructor(
    private readonly directory: AccountsDirectory,
    private readonly repository: AccountsRepository,
    private readonly accounts: AccountsService,
    private readonly sessions: SessionsService,
    private readonly audit: AuditService,
    private readonly bus: ChangeBus,
  ) {}

  listUsers(query: DirectoryQuery): Promise<{ users: User[]; nextCursor: string | undefined }> {
    return this.directory.listUsers(query);
  }

  /** The user with the balance after every pending charge of this process. */
  async user(id: string): Promise<User> {
    const user = await this.repository.getUser(id);
    if (!user) throw new GatewayError('not_found', `User '${id}' does not exist.`);
    return { ...user, balance: (await this.accounts.balance({ type: 'user', id })) ?? user.balance };
  }

  /** The operator changes a user's name, email, password or operator flag; a new password signs the user out everywhere. */
  async updateUser(id: string, changes: { name?: string; email?: string | null; password?: string; operator?: boolean }, actor: Actor): Promise<User> {
    const before = await this.user(id);
    const email = changes.email === undefined ? undefined : changes.email?.toLowerCase() ?? null;
    if (email) {
      const holder = await this.repository.findByEmail(email);
      if (holder && holder.user.id !== id) throw new GatewayError('conflict', `email: '${email}' is already registered`, { param: 'email' });
    }
    if (changes.password !== undefined) {
      checkPassword(changes.password);
      if ((email === undefined ? before.email : email) === null) throw new GatewayError('invalid_request', 'email: is required with a password', { param: 'email' });
    }
    const passwordHash = changes.password === undefined ? undefined : await hashPassword(changes.password);
    await this.repository.updateUser(id, {
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(email !== undefined ? { email } : {}),
      ...(passwordHash ? { passwordHash } : {}),
      ...(changes.operator !== undefined ? { operator: changes.operator } : {}),
    });
    if (passwordHash) await this.sessions.endOtherSessions(id, undefined);
    const after = await this.user(id);
    await this.audit.record(actor, 'user.update', { type: 'user', id }, { before: auditedUser(before), after: { ...auditedUser(after), passwordChanged: passwordHash !== undefined } });
    return after;
  }

  async deleteUser(id: string, actor: Actor): Promise<void> {
    const before = await this.repository.getUser(id);
    const outcome = await this.directory.deleteUser(id);
    if (outcome !== 'deleted') throw refused('User', id, outcome);
    await this.audit.record(actor, 'user.delete', { type: 'user', id }, { before: before ? auditedUser(before) : null });
  }

  listOrgs(query: DirectoryQuery): Promise<{ orgs: Org[]; nextCursor: string | undefined }> {
    return this.directory.listOrgs(query);
  }

  async org(id: string): Promise<Org & { members: Member[] }> {
    const org = await this.repository.getOrg(id);
    if (!org) throw new GatewayError('not_found', `Organization '${id}' does not exist.`);
    return { ...org, balance: (await this.accounts.balance({ type: 'org', id })) ?? org.balance, members: await this.directory.members(id) };
  }

  async members(orgId: string): Promise<Member[]> {
    return (await this.org(orgId)).members;
  }

  async deleteOrg(id: string, actor: Actor): Promise<void> {
    const before = await this.repository.getOrg(id);
    const outcome = await this.directory.deleteOrg(id);
    if (outcome !== 'deleted') throw refused('Organization', id, outcome);
    await this.bus.publish('orgs', id);
    await this.audit.record(actor, 'org.delete', { type: 'org', id }, { before: before ? auditedOrg(before) : null, orgId: id });
  }
}
