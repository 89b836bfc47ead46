import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { LedgerEntry, LedgerRepository } from '../billing/ledger.ts';
import type { LogScope, RequestLogRepository, RequestLogRow, RequestsQuery, UsageQuery, UsageRow } from './request-log.ts';

/** A page of a list, newest first; `nextCursor` is null on the last page (also when it is exactly full). */
export interface Page<Item> {
  data: Item[];
  nextCursor: string | null;
}

export interface RequestsFilter {
  orgId?: string | undefined;
  limit: number;
  cursor?: string | undefined;
  keyId?: string | undefined;
  model?: string | undefined;
  status?: number | undefined;
  from?: number | undefined;
  to?: number | undefined;
}

export interface UsageFilter extends Pick<UsageQuery, 'from' | 'to' | 'groupBy'> {
  orgId?: string | undefined;
}

/** A ledger entry with the balance right after it. */
export type LedgerLine = LedgerEntry & { balanceAfter: bigint };

/** Opaque cursors: the last row's place in the newest-first order. */
const encodeCursor = (created: number, id: string): string => Buffer.from(JSON.stringify([created, id])).toString('base64url');

function decodeCursor(cursor: string | undefined): { created: number; id: string } | undefined {
  if (cursor === undefined) return undefined;
  try {
    const [created, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof created === 'number' && Number.isSafeInteger(created) && typeof id === 'string') return { created, id };
  } catch {
    // answered below
  }
  throw invalidParam('cursor', 'is not a cursor this list gave');
}

/**
 * The request log, usage and ledger as customers and the operator read them (DESIGN §10). A user reads their own account,
 * and an org's: its owner or admin every request of it, a member only their own requests in it (and not its ledger); any
 * other org answers 404 as if it did not exist. The admin reads every account.
 */
export class UsageService {
  constructor(
    private readonly log: RequestLogRepository,
    private readonly ledger: LedgerRepository,
    private readonly accounts: Pick<AccountsService, 'orgsOf'>,
  ) {}

  /** Whose rows the user may read: their own account, or the org (a member only their own requests in it). */
  private async scopeOf(userId: string, orgId: string | undefined): Promise<{ scope: LogScope; role: 'owner' | 'admin' | 'member' | 'self' }> {
    if (orgId === undefined) return { scope: { account: { type: 'user', id: userId } }, role: 'self' };
    const membership = (await this.accounts.orgsOf(userId)).find((org) => org.id === orgId);
    if (!membership) throw new GatewayError('not_found', `Organization '${orgId}' not found.`, { param: 'orgId' });
    const account: AccountRef = { type: 'org', id: orgId };
    return membership.role === 'member' ? { scope: { account, userId }, role: 'member' } : { scope: { account }, role: membership.role };
  }

  async requests(userId: string, filter: RequestsFilter): Promise<Page<RequestLogRow>> {
    const { scope } = await this.scopeOf(userId, filter.orgId);
    return this.requestPage(scope, filter);
  }

  async usage(userId: string, filter: UsageFilter): Promise<UsageRow[]> {
    const { scope } = await this.scopeOf(userId, filter.orgId);
    return this.log.usage({ ...scope, from: filter.from, to: filter.to, groupBy: filter.groupBy });
  }

  /** The account's ledger, newest first, each entry with the balance after it (Σ of the entries up to it). */
  async ledgerPage(userId: string, filter: { orgId?: string | undefined; limit: number; cursor?: string | undefined }): Promise<Page<LedgerLine>> {
    const { scope, role } = await this.scopeOf(userId, filter.orgId);
    if (role === 'member') throw new GatewayError('forbidden', "Only the organization's owners and admins see its ledger.", { codeA: 'org_role_required' });
    const account = scope.account!;
    const before = decodeCursor(filter.cursor);
    // One more than the page: whether anything follows decides the cursor, so a full last page does not lead to an empty one.
    const fetched = await this.ledger.page(account, filter.limit + 1, before ? { createdAt: before.created, id: before.id } : undefined);
    const entries = fetched.slice(0, filter.limit);
    const first = entries[0];
    let balance = first ? await this.ledger.sumThrough(account, first) : 0n;
    const data = entries.map((entry) => {
      const line = { ...entry, balanceAfter: balance };
      balance -= entry.amount;
      return line;
    });
    const last = entries.at(-1);
    return { data, nextCursor: last && fetched.length > filter.limit ? encodeCursor(last.createdAt, last.id) : null };
  }

  /** The operator's view of every account's requests, optionally one user's or one org's. */
  adminRequests(filter: RequestsFilter & { userId?: string | undefined }): Promise<Page<RequestLogRow>> {
    return this.requestPage(adminScope(filter), filter);
  }

  adminUsage(filter: UsageFilter & { userId?: string | undefined }): Promise<UsageRow[]> {
    return this.log.usage({ ...adminScope(filter), from: filter.from, to: filter.to, groupBy: filter.groupBy });
  }

  private async requestPage(scope: LogScope, filter: RequestsFilter): Promise<Page<RequestLogRow>> {
    const before = decodeCursor(filter.cursor);
    // One more than the page, as the ledger's: the cursor is given only when a row follows.
    const query: RequestsQuery = { ...scope, limit: filter.limit + 1 };
    if (before) query.before = before;
    if (filter.keyId !== undefined) query.keyId = filter.keyId;
    if (filter.model !== undefined) query.model = filter.model;
    if (filter.status !== undefined) query.status = filter.status;
    if (filter.from !== undefined) query.from = filter.from;
    if (filter.to !== undefined) query.to = filter.to;
    const fetched = await this.log.requests(query);
    const rows = fetched.slice(0, filter.limit);
    const last = rows.at(-1);
    return { data: rows, nextCursor: last && fetched.length > filter.limit ? encodeCursor(last.created, last.id) : null };
  }
}

function adminScope(filter: { userId?: string | undefined; orgId?: string | undefined }): LogScope {
  return {
    ...(filter.orgId !== undefined ? { account: { type: 'org' as const, id: filter.orgId } } : {}),
    ...(filter.userId !== undefined ? { userId: filter.userId } : {}),
  };
}
