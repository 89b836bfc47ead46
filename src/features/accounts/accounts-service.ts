import { GatewayError } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { AMOUNT_RULE, formatMoney, MAX_AMOUNT, MAX_BALANCE, type Money } from '../../lib/money.ts';
import { sha256Hex } from '../../lib/hashing.ts';
import { hashPassword, verifyPassword } from '../../lib/passwords.ts';
import type { IdempotencyRepository } from '../billing/idempotency.ts';
import type { ChangeBus } from '../../lib/change-bus.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import { accountKey, type LedgerEntry, type LedgerRepository } from '../billing/ledger.ts';
import type { AccountRef, AccountsRepository, Org, Role, User } from './accounts.ts';
import { ADMIN_ACTOR, type AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';

const ADJUST_SCOPE = 'balance.adjust';
export const MIN_PASSWORD_LENGTH = 8;

/** The one password rule, for every door (admin API, sign-up, password change, reset). */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > 512) {
    throw new GatewayError('invalid_request', `password: must be ${MIN_PASSWORD_LENGTH} to 512 characters`, { param: 'password' });
  }
}

/** What the audit log keeps of a user or an org: never a password hash, never the balance (the ledger has it). */
export const auditedUser = (user: User) => ({ name: user.name, email: user.email, operator: user.operator });
export const auditedOrg = (org: Org) => ({ name: org.name, ownerId: org.ownerId, promptCaching: org.promptCaching });

/** Users, organisations, memberships and balance movements made by operators (admin API and CLI). */
export class AccountsService {
  /** Organisation settings read on the request path (prompt caching), kept in memory and dropped on change. */
  private readonly orgCache = new Map<string, Org | null>();

  constructor(
    private readonly repository: AccountsRepository,
    private readonly ledger: LedgerRepository,
    private readonly book: BalanceBook,
    private readonly clock: Clock,
    private readonly bus: ChangeBus,
    private readonly idempotency: IdempotencyRepository,
    private readonly audit: AuditService,
  ) {
    bus.subscribe((topic, id) => {
      if (topic === 'balance') return this.forgetBalance(id);
      if (topic !== 'orgs') return;
      if (id) this.orgCache.delete(id);
      else this.orgCache.clear();
    });
  }

  /** Whether a business key of this org may use prompt caching (SPEC 4.2: off until an owner or admin turns it on). */
  async promptCaching(orgId: string): Promise<boolean> {
    let org = this.orgCache.get(orgId);
    if (org === undefined) {
      org = (await this.repository.getOrg(orgId)) ?? null;
      this.orgCache.set(orgId, org);
    }
    return org?.promptCaching ?? false;
  }

  /**
   * Creates a user; with `signIn`, one who can sign in (email unique, case-insensitive; password hashed with argon2id) and,
   * with `operator`, reach the operator pages.
   */
  async createUser(name: string, balance: Money = 0n, signIn: { email?: string; password?: string; operator?: boolean } = {}, actor: Actor = ADMIN_ACTOR): Promise<User> {
    const id = newId('user');
    if (signIn.password !== undefined) checkPassword(signIn.password);
    if (signIn.password !== undefined && signIn.email === undefined) throw new GatewayError('invalid_request', 'email: is required with a password', { param: 'email' });
    const passwordHash = signIn.password === undefined ? null : await hashPassword(signIn.password);
    await this.repository.createUser({ id, name, email: signIn.email?.toLowerCase() ?? null, passwordHash, operator: signIn.operator ?? false }, this.clock.now());
    if (balance !== 0n) await this.adjust({ type: 'user', id }, balance, 'initial balance', undefined, actor);
    const user = (await this.repository.getUser(id))!;
    await this.audit.record(actor, 'user.create', { type: 'user', id }, { after: auditedUser(user) });
    return user;
  }

  getUser(id: string): Promise<User | undefined> {
    return this.repository.getUser(id);
  }

  /** A user's own changes (PATCH /api/v1/me): the name, the low-balance threshold, and the password when the current one is given right. */
  async updateProfile(userId: string, changes: { name?: string | undefined; password?: { current: string; new: string } | undefined; lowBalanceAlert?: Money | null | undefined }): Promise<void> {
    let passwordHash: string | undefined;
    if (changes.password) {
      const stored = await this.repository.passwordHash(userId);
      if (!stored || !(await verifyPassword(stored, changes.password.current))) {
        throw new GatewayError('forbidden', 'password.current: is not your current password', { param: 'password.current' });
      }
      checkPassword(changes.password.new);
      passwordHash = await hashPassword(changes.password.new);
    }
    await this.repository.updateUser(userId, { ...(changes.name !== undefined ? { name: changes.name } : {}), ...(passwordHash ? { passwordHash } : {}) });
    if (changes.lowBalanceAlert !== undefined) await this.setLowBalanceAlert({ type: 'user', id: userId }, changes.lowBalanceAlert, { type: 'user', id: userId, ip: null });
  }

  /** The balance below which a debit mails the account (the user, or an org's owners); null for no alert. */
  async lowBalanceAlert(account: AccountRef): Promise<Money | null> {
    return (await this.repository.lowBalanceAlert(account)) ?? null;
  }

  /** Sets or clears the low-balance threshold (DESIGN §15); the next debit that takes the balance below it mails once. */
  async setLowBalanceAlert(account: AccountRef, threshold: Money | null, actor: Actor): Promise<void> {
    if (threshold !== null && (threshold < 0n || threshold > MAX_BALANCE)) {
      throw new GatewayError('invalid_request', 'lowBalanceAlert: must be a decimal amount from 0 to 9000000000, or null', { param: 'lowBalanceAlert' });
    }
    const before = await this.repository.lowBalanceAlert(account);
    if (before === undefined) throw new GatewayError('not_found', `${account.type === 'user' ? 'User' : 'Organization'} '${account.id}' does not exist.`);
    if (before === threshold) return;
    await this.repository.setLowBalanceAlert(account, threshold);
    const shown = (value: Money | null) => ({ lowBalanceAlert: value === null ? null : formatMoney(value) });
    await this.audit.record(actor, `${account.type}.low_balance_alert`, account, { before: shown(before), after: shown(threshold), orgId: account.type === 'org' ? account.id : null });
  }

  /** The user's organisations with the user's role, each org's balance and settings (GET /api/v1/me). */
  async orgsOf(userId: string): Promise<Array<{ id: string; name: string; role: Role; balance: string; promptCaching: boolean }>> {
    const memberships = await this.repository.membershipsOf(userId);
    const orgs = [];
    for (const membership of memberships) {
      const org = await this.repository.getOrg(membership.orgId);
      if (!org) continue;
      const balance = (await this.balance({ type: 'org', id: org.id })) ?? org.balance;
      orgs.push({ id: org.id, name: org.name, role: membership.role, balance: formatMoney(balance), promptCaching: org.promptCaching });
    }
    return orgs;
  }

  async createOrg(input: { name: string; ownerId: string; balance?: Money; promptCaching?: boolean }, actor: Actor = ADMIN_ACTOR): Promise<Org> {
    if (!(await this.repository.getUser(input.ownerId))) throw new GatewayError('not_found', `User '${input.ownerId}' does not exist.`, { param: 'ownerId' });
    const id = newId('org');
    await this.repository.createOrg({ id, name: input.name, ownerId: input.ownerId, promptCaching: input.promptCaching ?? false }, this.clock.now());
    if (input.balance) await this.adjust({ type: 'org', id }, input.balance, 'initial balance', undefined, actor);
    const org = (await this.repository.getOrg(id))!;
    await this.audit.record(actor, 'org.create', { type: 'org', id }, { after: auditedOrg(org), orgId: id });
    return org;
  }

  getOrg(id: string): Promise<Org | undefined> {
    return this.repository.getOrg(id);
  }

  async updateOrg(id: string, changes: { name?: string; promptCaching?: boolean }, actor: Actor = ADMIN_ACTOR): Promise<Org> {
    const before = await this.repository.getOrg(id);
    const org = before && (await this.repository.updateOrg(id, changes));
    if (!before || !org) throw new GatewayError('not_found', `Organization '${id}' does not exist.`);
    await this.bus.publish('orgs', id);
    await this.audit.record(actor, 'org.update', { type: 'org', id }, { before: auditedOrg(before), after: auditedOrg(org), orgId: id });
    return org;
  }

  async addMember(orgId: string, userId: string, role: Role, actor: Actor = ADMIN_ACTOR): Promise<void> {
    if (!(await this.repository.getOrg(orgId))) throw new GatewayError('not_found', `Organization '${orgId}' does not exist.`);
    if (!(await this.repository.getUser(userId))) throw new GatewayError('not_found', `User '${userId}' does not exist.`, { param: 'userId' });
    const before = (await this.repository.getRole(orgId, userId)) ?? null;
    if (before === null) await this.repository.setMember(orgId, userId, role);
    // A role change keeps the organisation's one rule at this door too: it never loses its last owner.
    else if ((await this.repository.changeMember(orgId, userId, { role })) === 'last_owner') {
      throw new GatewayError('conflict', 'The organization must keep an owner: make another member an owner first.', { codeA: 'last_owner' });
    }
    await this.audit.record(actor, 'member.update', { type: 'user', id: userId }, { before: { role: before }, after: { role }, orgId });
  }

  getRole(orgId: string, userId: string): Promise<Role | undefined> {
    return this.repository.getRole(orgId, userId);
  }

  /**
   * Credits (positive) or debits (negative) an account; written before it returns. Returns the new balance. With an
   * idempotency key (DESIGN §4), the same key and request give the first answer again and move money once, even when
   * repeated concurrently or after a crash (the ledger entry's id is fixed by the first claim); the same key with another
   * request is a 409.
   */
  async adjust(account: AccountRef, amount: Money, description = 'admin adjustment', idempotencyKey?: string, actor: Actor = ADMIN_ACTOR): Promise<Money> {
    if (amount > MAX_AMOUNT || amount < -MAX_AMOUNT) throw new GatewayError('invalid_request', `amount: ${AMOUNT_RULE}`, { param: 'amount' });
    if (!(await this.exists(account))) throw new GatewayError('not_found', `${account.type === 'user' ? 'User' : 'Organization'} '${account.id}' does not exist.`);
    let entryId: string | undefined;
    if (idempotencyKey !== undefined) {
      const requestHash = sha256Hex(JSON.stringify([account.type, account.id, amount.toString(), description]));
      const claim = await this.idempotency.claim(ADJUST_SCOPE, idempotencyKey, requestHash, newId('ledger'), this.clock.now());
      if (claim.requestHash !== requestHash) {
        throw new GatewayError('conflict', 'Idempotency-Key was already used with a different request.', { param: 'Idempotency-Key' });
      }
      if (claim.response !== null) return BigInt(claim.response);
      entryId = claim.entryId;
    }
    const current = (await this.balance(account)) ?? 0n;
    if (current + amount > MAX_BALANCE) throw new GatewayError('invalid_request', 'amount: would take the balance beyond 9000000000', { param: 'amount' });
    await this.book.recordNow({ ...(entryId ? { id: entryId } : {}), account, amount, kind: amount >= 0n ? 'credit' : 'charge', requestId: null, model: null, description });
    // Other processes (a gateway, when the CLI credits) drop their copy of this balance and read it again.
    await this.bus.publish('balance', accountKey(account));
    const balance = (await this.balance(account))!;
    if (idempotencyKey !== undefined) await this.idempotency.complete(ADJUST_SCOPE, idempotencyKey, balance.toString());
    await this.audit.record(actor, amount >= 0n ? 'balance.credit' : 'balance.debit', account, {
      before: { balance: formatMoney(balance - amount) },
      after: { balance: formatMoney(balance), amount: formatMoney(amount), note: description, idempotencyKey: idempotencyKey ?? null },
      orgId: account.type === 'org' ? account.id : null,
    });
    return balance;
  }

  /** A `balance` notice names an account as `user:<id>` or `org:<id>` (accountKey). */
  private forgetBalance(key: string): void {
    const separator = key.indexOf(':');
    const type = key.slice(0, separator);
    if (type === 'user' || type === 'org') this.book.invalidate({ type, id: key.slice(separator + 1) });
  }

  /** The stored balance after every pending entry of this process is written. */
  async balance(account: AccountRef): Promise<Money | undefined> {
    await this.book.flush();
    this.book.invalidate(account);
    return this.ledger.balance(account);
  }

  /** The account's ledger, newest first; an unknown account is a 404, not an empty list. */
  async entries(account: AccountRef, limit = 1000): Promise<LedgerEntry[]> {
    if (!(await this.exists(account))) throw new GatewayError('not_found', `No such account '${account.id}'.`);
    await this.book.flush();
    return this.ledger.entries(account, limit);
  }

  async exists(account: AccountRef): Promise<boolean> {
    return account.type === 'user' ? (await this.repository.getUser(account.id)) !== undefined : (await this.repository.getOrg(account.id)) !== undefined;
  }

  membershipsOf(userId: string): Promise<Array<{ orgId: string; role: Role }>> {
    return this.repository.membershipsOf(userId);
  }

  countUsers(): Promise<number> {
    return this.repository.countUsers();
  }
}
