import { GatewayError } from '../../core/errors.ts';
import type { ChangeBus } from '../../lib/change-bus.ts';
import type { Clock } from '../../lib/clock.ts';
import { FailureLimiter } from '../../lib/failure-limiter.ts';
import { newId } from '../../lib/ids.ts';
import { AMOUNT_RULE, formatMoney, MAX_AMOUNT, type Money } from '../../lib/money.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { AuditService } from '../audit/audit-service.ts';
import type { Actor } from '../audit/audit.ts';
import { accountKey } from '../billing/ledger.ts';
import { newVoucherCode, normalizeVoucherCode, voucherCodeHash, voucherCodeStart } from './voucher-codes.ts';
import type { Voucher, VoucherQuery, VouchersRepository } from './vouchers.ts';

export const MAX_VOUCHERS_PER_BATCH = 1000;
/** Failed redemptions per user in a window before 429: ten guesses at 100-bit codes. */
const FAILURES_PER_USER = 10;
const FAILURE_WINDOW_MS = 15 * 60_000;

/** One answer for unknown, expired, void and used codes: a guesser learns nothing about which codes exist. */
const invalidCode = (): GatewayError =>
  new GatewayError('invalid_request', 'code: is not a valid voucher code (unknown, expired, void or already redeemed)', { param: 'code', codeA: 'voucher_invalid' });

/** Prepaid codes: the operator makes and voids them (admin API, CLI), customers redeem them once (management API). */
export class VouchersService {
  private readonly failures: FailureLimiter;

  constructor(
    private readonly repository: VouchersRepository,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
  ) {
    this.failures = new FailureLimiter(clock, FAILURES_PER_USER, FAILURE_WINDOW_MS);
  }

  /** Makes `count` codes worth `amount` each; the codes are returned here only (the database keeps their hashes). */
  async create(input: { amount: Money; count: number; expiresAt?: number | null; note?: string | null }, actor: Actor): Promise<Array<{ voucher: Voucher; code: string }>> {
    if (input.amount <= 0n || input.amount > MAX_AMOUNT) throw new GatewayError('invalid_request', `amount: must be positive; ${AMOUNT_RULE}`, { param: 'amount' });
    if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_VOUCHERS_PER_BATCH) {
      throw new GatewayError('invalid_request', `count: must be an integer from 1 to ${MAX_VOUCHERS_PER_BATCH}`, { param: 'count' });
    }
    const now = this.clock.now();
    if (input.expiresAt != null && input.expiresAt <= now) throw new GatewayError('invalid_request', 'expiresAt: must be in the future', { param: 'expiresAt' });
    const made = Array.from({ length: input.count }, () => {
      const code = newVoucherCode();
      const normalized = normalizeVoucherCode(code)!;
      const voucher: Voucher = {
        id: newId('voucher'),
        codeStart: voucherCodeStart(normalized),
        amount: input.amount,
        note: input.note ?? null,
        createdAt: now,
        expiresAt: input.expiresAt ?? null,
        voidedAt: null,
        redeemedAt: null,
        redeemedBy: null,
        account: null,
        ledgerId: null,
      };
      return { voucher, code, codeHash: voucherCodeHash(normalized) };
    });
    await this.repository.insert(made);
    await this.audit.record(actor, 'voucher.create', { type: 'voucher', id: made.length === 1 ? made[0]!.voucher.id : null }, {
      after: { ids: made.map(({ voucher }) => voucher.id), amount: formatMoney(input.amount), count: input.count, expiresAt: input.expiresAt ?? null, note: input.note ?? null },
    });
    return made.map(({ voucher, code }) => ({ voucher, code }));
  }

  list(query: Omit<VoucherQuery, 'now'>): Promise<{ vouchers: Voucher[]; nextCursor: string | undefined }> {
    return this.repository.list({ ...query, now: this.clock.now() });
  }

  async get(id: string): Promise<Voucher> {
    const voucher = await this.repository.get(id);
    if (!voucher) throw new GatewayError('not_found', `Voucher '${id}' does not exist.`);
    return voucher;
  }

  /** Voids an unredeemed voucher; a redeemed one has paid already (409), and voiding twice is a 409 too. */
  async void(id: string, actor: Actor): Promise<Voucher> {
    const before = await this.get(id);
    const voided = await this.repository.void(id, this.clock.now());
    if (!voided) throw new GatewayError('conflict', `Voucher '${id}' is already ${before.redeemedAt !== null ? 'redeemed' : 'void'}.`);
    await this.audit.record(actor, 'voucher.void', { type: 'voucher', id }, { before: { voidedAt: null }, after: { voidedAt: voided.voidedAt } });
    return voided;
  }

  /**
   * Credits the code's amount to the user, or to one of their orgs where they are owner or admin, once: the voucher is
   * marked in the same transaction as the ledger entry. Returns the credited account's new balance.
   */
  async redeem(userId: string, code: string, orgId: string | undefined, actor: Actor): Promise<{ account: AccountRef; balance: Money; voucher: Voucher }> {
    const account: AccountRef = orgId === undefined ? { type: 'user', id: userId } : { type: 'org', id: orgId };
    if (orgId !== undefined) await this.checkOrgRole(orgId, userId);
    const waitMs = this.failures.blockedFor(userId);
    if (waitMs > 0) throw new GatewayError('rate_limited', 'Too many failed voucher redemptions; try again later.', { codeA: 'rate_limit_exceeded', retryAfterMs: waitMs });
    const normalized = normalizeVoucherCode(code);
    const entryId = newId('ledger');
    const at = this.clock.now();
    const voucher = normalized === undefined
      ? undefined
      : await this.repository.redeem(voucherCodeHash(normalized), { userId, account, at, entryId }, (claimed) => ({
          id: entryId,
          account,
          amount: claimed.amount,
          kind: 'credit',
          requestId: null,
          keyId: null,
          model: null,
          description: `voucher ${claimed.id}${claimed.note ? ` (${claimed.note})` : ''}`,
          createdAt: at,
        }));
    if (!voucher) {
      this.failures.fail(userId);
      throw invalidCode();
    }
    // Every process (this one included) drops its cached copy of the balance and reads the credited one.
    await this.bus.publish('balance', accountKey(account));
    const balance = (await this.accounts.balance(account))!;
    await this.audit.record(actor, 'voucher.redeem', { type: 'voucher', id: voucher.id }, { after: { account, amount: formatMoney(voucher.amount) }, orgId: orgId ?? null });
    return { account, balance, voucher };
  }

  /** Another org is "not found" (its existence is not revealed); a member may not spend the org's vouchers for it. */
  private async checkOrgRole(orgId: string, userId: string): Promise<void> {
    const role = await this.accounts.getRole(orgId, userId);
    if (!role) throw new GatewayError('not_found', `Organization '${orgId}' does not exist.`, { param: 'orgId' });
    if (role === 'member') throw new GatewayError('forbidden', 'orgId: only an owner or admin of the organization may redeem vouchers into it', { param: 'orgId' });
  }
}
