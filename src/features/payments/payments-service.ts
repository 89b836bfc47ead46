import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { formatMoney, NANOS_PER_UNIT, type Money } from '../../lib/money.ts';
import type { ChangeBus } from '../../storage/change-bus.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { AuditService } from '../audit/audit-service.ts';
import { SYSTEM_ACTOR } from '../audit/audit-service.ts';
import { accountKey, type LedgerEntry } from '../billing/ledger.ts';
import type { AutoRechargeService } from './auto-recharge-service.ts';
import { pendingPayment, type CardVendor, type Payment, type PaymentsRepository, type Settlement, type VendorEvent } from './payments.ts';

/**
 * Currencies whose smallest unit is the unit itself, and those with three decimals, as Stripe counts them
 * (https://docs.stripe.com/currencies#zero-decimal); every other currency has two.
 */
const ZERO_DECIMAL = new Set(['bif', 'clp', 'djf', 'gnf', 'jpy', 'kmf', 'krw', 'mga', 'pyg', 'rwf', 'ugx', 'vnd', 'vuv', 'xaf', 'xof', 'xpf']);
const THREE_DECIMAL = new Set(['bhd', 'jod', 'kwd', 'omr', 'tnd']);

/** How a ledger note names the payment a refund or dispute belongs to. */
const reference = (payment: Payment): string => (payment.sessionId ? `Checkout Session ${payment.sessionId}` : `auto-recharge ${payment.id}`);

export const minorDigits = (currency: string): number => (ZERO_DECIMAL.has(currency) ? 0 : THREE_DECIMAL.has(currency) ? 3 : 2);
export const nanosPerMinor = (currency: string): bigint => NANOS_PER_UNIT / 10n ** BigInt(minorDigits(currency));

export interface PaymentsSettings {
  /** The gateway's currency (TOLLGATE_CURRENCY). */
  currency: string;
  min: Money;
  max: Money;
  /** Where the console lives: Checkout returns the customer there. */
  publicUrl: { base: string };
}

export interface WebhookOutcome {
  /**
   * What the event did: `credited`, `debited`, `expired`, `card_saved` (auto-recharge's card), `failed` (an auto-recharge
   * declined), or `ignored` (unknown payment, already settled, other type).
   */
  result: 'credited' | 'debited' | 'expired' | 'card_saved' | 'failed' | 'ignored';
  paymentId: string | null;
}

/** The account a customer pays into: their own, or an org they own or administer (another org is "not found"; a member may not). */
export async function payingAccount(accounts: AccountsService, userId: string, orgId: string | undefined): Promise<AccountRef> {
  if (orgId === undefined) return { type: 'user', id: userId };
  const role = await accounts.getRole(orgId, userId);
  if (!role) throw new GatewayError('not_found', `Organization '${orgId}' does not exist.`, { param: 'orgId' });
  if (role === 'member') throw new GatewayError('forbidden', 'orgId: only an owner or admin of the organization may pay for it', { param: 'orgId' });
  return { type: 'org', id: orgId };
}

/** Card payments switched off (no STRIPE_SECRET_KEY): their routes answer 404. */
export function requireVendor(vendor: CardVendor | undefined): CardVendor {
  if (!vendor) throw new GatewayError('not_found', 'Card payments are not configured on this gateway (STRIPE_SECRET_KEY); vouchers remain.', { codeA: 'payments_disabled' });
  return vendor;
}

/** Card top-ups (DESIGN §15): a Checkout Session per top-up; the vendor's signed events credit and debit, each once. */
export class PaymentsService {
  constructor(
    private readonly repository: PaymentsRepository,
    private readonly vendor: CardVendor | undefined,
    private readonly accounts: AccountsService,
    private readonly audit: AuditService,
    private readonly bus: ChangeBus,
    private readonly clock: Clock,
    private readonly settings: PaymentsSettings,
    /** Auto-recharge's side of the vendor's events (saved cards, declined charges). */
    private readonly autoRecharge?: AutoRechargeService,
  ) {}

  /** What the console shows: whether card payments are on, and their bounds. */
  options(): { enabled: boolean; currency: string; min: string; max: string } {
    return { enabled: this.vendor !== undefined, currency: this.settings.currency, min: formatMoney(this.settings.min), max: formatMoney(this.settings.max) };
  }

  /** Starts a top-up of the user's balance, or of an org's that they own or administer: a Checkout Session to pay at. */
  async checkout(userId: string, input: { amount: Money; orgId?: string }): Promise<{ payment: Payment; url: string }> {
    const vendor = this.requireVendor();
    const currency = this.settings.currency.toLowerCase();
    const { min, max } = this.settings;
    if (input.amount < min || input.amount > max) {
      throw invalidParam('amount', `must be from ${formatMoney(min)} to ${formatMoney(max)} ${this.settings.currency}`);
    }
    const unit = nanosPerMinor(currency);
    if (input.amount % unit !== 0n) throw invalidParam('amount', `has more decimals than ${this.settings.currency} has (${minorDigits(currency)})`);
    const account = await payingAccount(this.accounts, userId, input.orgId);
    const id = newId('payment');
    const minorAmount = Number(input.amount / unit);
    const base = this.settings.publicUrl.base.replace(/\/+$/, '');
    const session = await vendor
      .createCheckout({
        paymentId: id,
        minorAmount,
        currency,
        description: `Balance top-up (${account.type === 'org' ? 'organization' : 'personal'})`,
        successUrl: `${base}/console/billing?payment=${id}`,
        cancelUrl: `${base}/console/billing?payment=${id}&cancelled=1`,
        metadata: { tollgate_payment: id, account_type: account.type, account_id: account.id },
      })
      .catch((error: unknown) => {
        throw new GatewayError('upstream_error', `The card vendor did not open a checkout: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      });
    const payment = pendingPayment({ id, kind: 'checkout', sessionId: session.sessionId, account, userId, amount: input.amount, minorAmount, currency, createdAt: this.clock.now() });
    await this.repository.insert(payment);
    return { payment, url: session.url };
  }

  /** The user's own top-ups, or an org's (owner/admin). */
  async list(userId: string, query: { orgId?: string; limit: number; cursor?: string }): Promise<{ payments: Payment[]; nextCursor: string | undefined }> {
    const account = await payingAccount(this.accounts, userId, query.orgId);
    return this.repository.list({ account, limit: query.limit, ...(query.cursor !== undefined ? { cursor: query.cursor } : {}) });
  }

  /** Every account's top-ups (the admin API), or one account's. */
  listAll(query: { account?: AccountRef; limit: number; cursor?: string }): Promise<{ payments: Payment[]; nextCursor: string | undefined }> {
    return this.repository.list(query);
  }

  /**
   * A webhook delivery: verified with the vendor's own signature check (a bad one throws 400 and changes nothing), then
   * applied once, however often and however concurrently the event arrives.
   */
  async receive(rawBody: Buffer, signature: string | undefined): Promise<WebhookOutcome> {
    const vendor = this.requireVendor();
    let event: VendorEvent;
    try {
      event = vendor.verifyEvent(rawBody, signature);
    } catch (error) {
      throw new GatewayError('invalid_request', `stripe-signature: ${error instanceof Error ? error.message : String(error)}`, { param: 'stripe-signature', codeA: 'invalid_signature' });
    }
    switch (event.type) {
      case 'checkout.completed':
        return event.paid ? this.credit(event) : { result: 'ignored', paymentId: event.paymentId };
      case 'checkout.expired': {
        const payment = await this.repository.find({ ...(event.paymentId ? { id: event.paymentId } : {}), sessionId: event.sessionId });
        if (!payment) return { result: 'ignored', paymentId: null };
        const settled = await this.repository.settle(payment.id, (current) => (current.status === 'pending' ? { changes: { status: 'expired' }, entries: [] } : undefined));
        return { result: settled?.applied ? 'expired' : 'ignored', paymentId: payment.id };
      }
      case 'charge.refunded':
        return this.refund(event);
      case 'dispute.lost':
        return this.disputeLost(event);
      case 'payment_intent.succeeded':
        return this.creditIntent(event);
      case 'setup.completed':
        return this.autoRecharge ? this.autoRecharge.cardSaved(event) : { result: 'ignored', paymentId: null };
      case 'payment_intent.failed':
        return this.autoRecharge ? this.autoRecharge.chargeFailed(event) : { result: 'ignored', paymentId: null };
      default:
        return { result: 'ignored', paymentId: null };
    }
  }

  private async credit(event: Extract<VendorEvent, { type: 'checkout.completed' }>): Promise<WebhookOutcome> {
    const payment = await this.repository.find({ ...(event.paymentId ? { id: event.paymentId } : {}), sessionId: event.sessionId });
    if (!payment) return { result: 'ignored', paymentId: null };
    const paid = event.minorAmount ?? payment.minorAmount;
    const currency = event.currency ?? payment.currency;
    if (currency !== payment.currency) throw new GatewayError('invalid_request', `currency: the payment was in ${currency}, the account is in ${payment.currency}`, { param: 'currency' });
    const at = this.clock.now();
    const outcome = await this.repository.settle(payment.id, (current): Settlement => {
      if (current.status === 'paid') return undefined;
      const entry = this.entry(current, `credit_${current.id}`, BigInt(paid) * nanosPerMinor(currency), 'credit', `card top-up, Checkout Session ${current.sessionId}`, at);
      return { changes: { status: 'paid', paidAt: at, paymentIntent: event.paymentIntent ?? current.paymentIntent }, entries: [entry] };
    });
    return this.settled(outcome, 'credited', 'payment.credit');
  }

  /**
   * An off-session charge succeeded: credits an auto-recharge once (also one recorded as failed, when the vendor took the
   * money after all). A Checkout payment's intent succeeds too; its session's event credits it, so this one is ignored.
   */
  private async creditIntent(event: Extract<VendorEvent, { type: 'payment_intent.succeeded' }>): Promise<WebhookOutcome> {
    const payment = await this.repository.find({ ...(event.paymentId ? { id: event.paymentId } : {}), paymentIntent: event.paymentIntent });
    if (!payment || payment.kind !== 'auto_recharge') return { result: 'ignored', paymentId: payment?.id ?? null };
    if (event.currency !== payment.currency) throw new GatewayError('invalid_request', `currency: the payment was in ${event.currency}, the account is in ${payment.currency}`, { param: 'currency' });
    const at = this.clock.now();
    const outcome = await this.repository.settle(payment.id, (current): Settlement => {
      if (current.status === 'paid') return undefined;
      const amount = BigInt(event.minorAmount) * nanosPerMinor(current.currency);
      const entry = this.entry(current, `credit_${current.id}`, amount, 'credit', `auto-recharge ${current.id} (card, PaymentIntent ${event.paymentIntent})`, at);
      return { changes: { status: 'paid', paidAt: at, paymentIntent: event.paymentIntent, failure: null }, entries: [entry] };
    });
    return this.settled(outcome, 'credited', 'payment.credit');
  }

  private async refund(event: Extract<VendorEvent, { type: 'charge.refunded' }>): Promise<WebhookOutcome> {
    const payment = await this.findForCharge(event.paymentIntent, event.paymentId);
    if (!payment) return { result: 'ignored', paymentId: null };
    const at = this.clock.now();
    const outcome = await this.repository.settle(payment.id, (current): Settlement => {
      // `amount_refunded` is cumulative: debit only what this event adds to what was debited before.
      const added = event.refundedMinor - current.refundedMinor;
      if (added <= 0) return undefined;
      const entry = this.entry(current, `refund_${event.chargeId}_${event.refundedMinor}`, -BigInt(added) * nanosPerMinor(current.currency), 'charge', `card payment refunded (${event.chargeId}), ${reference(current)}`, at);
      return { changes: { refundedMinor: event.refundedMinor }, entries: [entry] };
    });
    return this.settled(outcome, 'debited', 'payment.refund');
  }

  private async disputeLost(event: Extract<VendorEvent, { type: 'dispute.lost' }>): Promise<WebhookOutcome> {
    const payment = await this.findForCharge(event.paymentIntent, null);
    if (!payment) return { result: 'ignored', paymentId: null };
    const at = this.clock.now();
    const outcome = await this.repository.settle(payment.id, (current): Settlement => {
      if (current.lostDispute !== null) return undefined;
      const entry = this.entry(current, `dispute_${event.disputeId}`, -BigInt(event.minorAmount) * nanosPerMinor(current.currency), 'charge', `card payment disputed and lost (${event.disputeId}), ${reference(current)}`, at);
      return { changes: { lostDispute: event.disputeId }, entries: [entry] };
    });
    return this.settled(outcome, 'debited', 'payment.dispute_lost');
  }

  private findForCharge(paymentIntent: string | null, paymentId: string | null): Promise<Payment | undefined> {
    if (paymentIntent === null && paymentId === null) return Promise.resolve(undefined);
    return this.repository.find({ ...(paymentId ? { id: paymentId } : {}), ...(paymentIntent ? { paymentIntent } : {}) });
  }

  /** A ledger entry whose id follows from the event, so a write repeated by a retry is the same entry. */
  private entry(payment: Payment, name: string, amount: Money, kind: LedgerEntry['kind'], description: string, at: number): LedgerEntry {
    return { id: `led_${name}`, account: payment.account, amount, kind, requestId: null, keyId: null, model: null, description, createdAt: at };
  }

  private async settled(outcome: { payment: Payment; applied: boolean } | undefined, result: 'credited' | 'debited', action: string): Promise<WebhookOutcome> {
    if (!outcome) return { result: 'ignored', paymentId: null };
    if (!outcome.applied) return { result: 'ignored', paymentId: outcome.payment.id };
    const { payment } = outcome;
    // Every process (this one included) drops its cached balance of the account and reads the new one.
    await this.bus.publish('balance', accountKey(payment.account));
    await this.audit.record(SYSTEM_ACTOR, action, { type: 'payment', id: payment.id }, {
      after: { account: payment.account, sessionId: payment.sessionId, status: payment.status, refunded: payment.refundedMinor, lostDispute: payment.lostDispute },
      orgId: payment.account.type === 'org' ? payment.account.id : null,
    });
    return { result, paymentId: payment.id };
  }

  private requireVendor(): CardVendor {
    return requireVendor(this.vendor);
  }
}
