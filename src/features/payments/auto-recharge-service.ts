import type { Logger } from 'pino';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { Job, JobOutcome } from '../../jobs/jobs.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import { formatMoney, NANOS_PER_UNIT, type Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { AccountsService } from '../accounts/accounts-service.ts';
import type { Actor } from '../audit/audit.ts';
import { SYSTEM_ACTOR, type AuditService } from '../audit/audit-service.ts';
import { crossedBelow, type LedgerWrite } from '../billing/ledger.ts';
import type { MailOutbox } from '../mail/mail-outbox.ts';
import { autoRechargeFailedMail } from '../mail/templates.ts';
import type { AutoRecharge, AutoRechargeRepository } from './auto-recharge.ts';
import { minorDigits, nanosPerMinor, payingAccount, requireVendor, type PaymentsSettings, type WebhookOutcome } from './payments-service.ts';
import { pendingPayment, type CardVendor, type Payment, type PaymentsRepository, type VendorEvent } from './payments.ts';

/** A threshold beyond this is a typo, not a plan (the same bound as low-balance alerts). */
const THRESHOLD_MAX = 9_000_000_000n * NANOS_PER_UNIT;
/** The card vendor unreachable: the charge is asked again after 10 s, 30 s, 90 s, … (at most 10 min), then given up. */
const CHARGE_ATTEMPTS = 6;
/** A detach is tried this often: the delays grow to 10 minutes, so the last try comes about a day after the first. */
const DETACH_ATTEMPTS = 150;
const retryDelayMs = (attempts: number): number => Math.min(10_000 * 3 ** attempts, 600_000);

/** What the console and scripts see: the choice, the card, and the last attempt's payment. */
export interface AutoRechargeState {
  settings: AutoRecharge;
  lastPayment: Payment | undefined;
}

const unset = (account: AccountRef): AutoRecharge => ({
  account,
  enabled: false,
  threshold: null,
  amount: null,
  customerId: null,
  card: null,
  lastAttemptAt: null,
  lastPaymentId: null,
  configuredBy: null,
  updatedAt: 0,
});

/**
 * Card auto-recharge (issue 17). A customer saves a card (a Checkout Session in setup mode on the account's vendor customer)
 * and sets `{enabled, threshold, amount}`. A ledger write whose debit takes the balance below the threshold claims an
 * attempt in its own transaction — at most one per account per hour, decided by one conditional update in the database —
 * with a payment and a durable job; the job charges the card off-session (idempotency key = the payment id). Only the vendor's
 * signed `payment_intent.succeeded` credits it (PaymentsService), once. A declined charge is recorded on the payment, mailed to
 * the customer and shown in the console; it turns nothing off.
 */
export class AutoRechargeService {
  constructor(
    private readonly repository: AutoRechargeRepository,
    private readonly payments: PaymentsRepository,
    private readonly vendor: CardVendor | undefined,
    private readonly accounts: AccountsService,
    private readonly mail: MailOutbox,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly settings: PaymentsSettings,
  ) {}

  /** The account's auto-recharge (the user's own, or an org's for its owners and admins). */
  async state(userId: string, orgId: string | undefined): Promise<AutoRechargeState> {
    requireVendor(this.vendor);
    return this.stateOf(await payingAccount(this.accounts, userId, orgId));
  }

  /**
   * Sets the choice. Turning it on needs a saved card, a threshold and an amount within the top-up bounds; left out, the
   * threshold and amount stay as they were. When the balance is already below the threshold, a recharge is claimed at once.
   */
  async configure(actor: Actor & { id: string }, input: { orgId?: string; enabled: boolean; threshold?: Money; amount?: Money }): Promise<AutoRechargeState> {
    requireVendor(this.vendor);
    const account = await payingAccount(this.accounts, actor.id, input.orgId);
    const before = (await this.repository.get(account)) ?? unset(account);
    const threshold = input.threshold ?? before.threshold;
    const amount = input.amount ?? before.amount;
    if (threshold !== null && (threshold < 0n || threshold > THRESHOLD_MAX)) throw invalidParam('threshold', 'must be a decimal amount from 0 to 9000000000');
    if (amount !== null && input.amount !== undefined) this.checkAmount(amount);
    if (input.enabled) {
      if (threshold === null) throw invalidParam('threshold', 'is required to turn auto-recharge on');
      if (amount === null) throw invalidParam('amount', 'is required to turn auto-recharge on');
      if (!before.card) throw invalidParam('enabled', 'save a card first (POST /api/v1/payments/auto-recharge/card): auto-recharge charges a saved card');
    }
    const after = await this.repository.configure(account, { enabled: input.enabled, threshold, amount, by: actor.id }, this.clock.now());
    await this.audit.record(actor, 'payment.auto_recharge.update', { type: account.type, id: account.id }, {
      before: shown(before),
      after: shown(after),
      orgId: account.type === 'org' ? account.id : null,
    });
    await this.rechargeIfBelow(after);
    return this.stateOf(account);
  }

  /** Opens a Checkout Session in setup mode on the account's vendor customer (made on first use): the card to charge later. */
  async startCardSetup(userId: string, orgId: string | undefined): Promise<{ sessionId: string; url: string }> {
    const vendor = requireVendor(this.vendor);
    const account = await payingAccount(this.accounts, userId, orgId);
    const base = this.settings.publicUrl.base.replace(/\/+$/, '');
    const metadata = { account_type: account.type, account_id: account.id, tollgate_purpose: 'auto_recharge' };
    try {
      let customerId = (await this.repository.get(account))?.customerId ?? null;
      if (customerId === null) {
        const name = account.type === 'user' ? (await this.accounts.getUser(account.id))?.name : (await this.accounts.getOrg(account.id))?.name;
        const made = await vendor.createCustomer({ name: name ?? account.id, metadata, idempotencyKey: `customer-${account.type}-${account.id}` });
        customerId = await this.repository.keepCustomer(account, made, this.clock.now());
      }
      const setup = await vendor.createCardSetup({
        customerId,
        currency: this.settings.currency.toLowerCase(),
        reference: `${account.type}:${account.id}`,
        successUrl: `${base}/console/billing?card=saved`,
        cancelUrl: `${base}/console/billing?card=cancelled`,
        metadata,
      });
      return setup;
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      throw new GatewayError('upstream_error', `The card vendor did not open a card setup: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /** Forgets the saved card and turns auto-recharge off (the customer's own, visible choice). */
  async removeCard(actor: Actor & { id: string }, orgId: string | undefined): Promise<AutoRechargeState> {
    requireVendor(this.vendor);
    const account = await payingAccount(this.accounts, actor.id, orgId);
    const before = (await this.repository.get(account)) ?? unset(account);
    const after = await this.repository.removeCard(account, this.clock.now());
    await this.audit.record(actor, 'payment.auto_recharge.card_removed', { type: account.type, id: account.id }, { before: shown(before), after: shown(after), orgId: account.type === 'org' ? account.id : null });
    return this.stateOf(account);
  }

  /** The ledger's watcher: a debit that crosses an account's auto-recharge threshold claims an attempt in the same transaction. */
  readonly watch = async ({ moves }: LedgerWrite, transaction: unknown): Promise<void> => {
    for (const move of moves) {
      if (move.autoRechargeBelow === null || !crossedBelow(move, move.autoRechargeBelow)) continue;
      const payment = await this.claim(move.account, transaction);
      if (payment) this.logger.info({ payment: payment.id, account: move.account }, 'balance fell below the auto-recharge threshold: charging the saved card');
    }
  };

  /** The job of a claimed attempt: charges the saved card off-session; the vendor's success event credits it. */
  readonly charge = async (job: Job): Promise<JobOutcome> => {
    const payment = await this.payments.get(job.subjectId);
    if (!payment || payment.kind !== 'auto_recharge') return { type: 'done' };
    if (payment.status === 'failed') {
      await this.notifyFailure(payment);
      return { type: 'done' };
    }
    if (payment.status !== 'pending' || payment.paymentIntent !== null) return { type: 'done' };
    const settings = await this.repository.get(payment.account);
    if (!this.vendor || !settings?.card || !settings.customerId) {
      await this.fail(payment, this.vendor ? 'no card is saved any more' : 'card payments are switched off on this gateway', null);
      return { type: 'done' };
    }
    let result: Awaited<ReturnType<CardVendor['chargeSaved']>>;
    try {
      result = await this.vendor.chargeSaved({
        customerId: settings.customerId,
        paymentMethod: settings.card.paymentMethod,
        minorAmount: payment.minorAmount,
        currency: payment.currency,
        description: `Auto-recharge ${payment.id} (${payment.account.type === 'org' ? 'organization' : 'personal'} balance)`,
        metadata: { tollgate_payment: payment.id, account_type: payment.account.type, account_id: payment.account.id, tollgate_purpose: 'auto_recharge' },
        // One charge per attempt, however often the job runs (a crash after the vendor took it, a lost answer).
        idempotencyKey: `auto-recharge-${payment.id}`,
      });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (job.attempts + 1 >= CHARGE_ATTEMPTS) {
        await this.fail(payment, `the card vendor could not be reached (${message})`, null);
        return { type: 'done' };
      }
      return { type: 'retry', at: this.clock.now() + retryDelayMs(job.attempts), error: message };
    }
    if (result.outcome === 'declined') {
      await this.fail(payment, result.reason, result.paymentIntent);
      return { type: 'done' };
    }
    await this.payments.settle(payment.id, (current) => (current.status === 'pending' && current.paymentIntent === null ? { changes: { paymentIntent: result.paymentIntent }, entries: [] } : undefined));
    return { type: 'done' };
  };

  /**
   * The job of a removed or replaced card: detaches it at the vendor, so nothing can charge it there any more. Retried
   * with back-off while the vendor cannot be asked (for about a day: DETACH_ATTEMPTS), then left failed with its error in
   * the jobs table and the log, for the operator to detach by hand.
   */
  readonly detach = async (job: Job): Promise<JobOutcome> => {
    const failedAttempt = (message: string): JobOutcome => {
      if (job.attempts + 1 >= DETACH_ATTEMPTS) {
        this.logger.error({ paymentMethod: job.subjectId, error: message }, 'a removed card could not be detached at the card vendor; detach it in its dashboard');
        return { type: 'failed', error: message };
      }
      return { type: 'retry', at: this.clock.now() + retryDelayMs(job.attempts), error: message };
    };
    if (!this.vendor) return failedAttempt('card payments are switched off on this gateway');
    try {
      await this.vendor.detachCard(job.subjectId);
      return { type: 'done' };
    } catch (error) {
      return failedAttempt(error instanceof Error ? error.message : String(error));
    }
  };

  /** A setup session completed: the card it saved becomes the account's (when the session was the account's customer's). */
  async cardSaved(event: Extract<VendorEvent, { type: 'setup.completed' }>): Promise<WebhookOutcome> {
    const vendor = requireVendor(this.vendor);
    if (!event.account || !event.setupIntent) return { result: 'ignored', paymentId: null };
    const settings = await this.repository.get(event.account);
    if (!settings?.customerId) return { result: 'ignored', paymentId: null };
    let card: Awaited<ReturnType<CardVendor['savedCard']>>;
    try {
      card = await vendor.savedCard(event.setupIntent);
    } catch (error) {
      // Answered 5xx: the vendor delivers the event again later.
      throw new GatewayError('upstream_error', `The card vendor did not show the saved card: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (card.customerId !== settings.customerId || settings.card?.paymentMethod === card.paymentMethod) return { result: 'ignored', paymentId: null };
    const { customerId: _customer, ...saved } = card;
    const after = await this.repository.saveCard(event.account, saved, this.clock.now());
    await this.audit.record(SYSTEM_ACTOR, 'payment.auto_recharge.card_saved', { type: event.account.type, id: event.account.id }, {
      after: shown(after),
      orgId: event.account.type === 'org' ? event.account.id : null,
    });
    await this.rechargeIfBelow(after);
    return { result: 'card_saved', paymentId: null };
  }

  /** The vendor reports an off-session charge failed (also after first accepting it). */
  async chargeFailed(event: Extract<VendorEvent, { type: 'payment_intent.failed' }>): Promise<WebhookOutcome> {
    const payment = await this.payments.find({ ...(event.paymentId ? { id: event.paymentId } : {}), paymentIntent: event.paymentIntent });
    if (!payment || payment.kind !== 'auto_recharge') return { result: 'ignored', paymentId: null };
    if (payment.status === 'pending') return (await this.fail(payment, event.reason, event.paymentIntent)) ? { result: 'failed', paymentId: payment.id } : { result: 'ignored', paymentId: payment.id };
    // Already recorded: make sure its mail was queued (a failure between the two is redelivered here).
    if (payment.status === 'failed') await this.notifyFailure(payment);
    return { result: 'ignored', paymentId: payment.id };
  }

  private async stateOf(account: AccountRef): Promise<AutoRechargeState> {
    const settings = (await this.repository.get(account)) ?? unset(account);
    const lastPayment = settings.lastPaymentId === null ? undefined : await this.payments.get(settings.lastPaymentId);
    return { settings, lastPayment };
  }

  private checkAmount(amount: Money): void {
    const { min, max, currency } = this.settings;
    if (amount < min || amount > max) throw invalidParam('amount', `must be from ${formatMoney(min)} to ${formatMoney(max)} ${currency}`);
    if (amount % nanosPerMinor(currency.toLowerCase()) !== 0n) throw invalidParam('amount', `has more decimals than ${currency} has (${minorDigits(currency.toLowerCase())})`);
  }

  /** Saving the choice or a card while the balance is already below the threshold claims a recharge (the hourly rule holds). */
  private async rechargeIfBelow(settings: AutoRecharge): Promise<void> {
    if (!settings.enabled || !settings.card || settings.threshold === null || settings.amount === null) return;
    const balance = await this.accounts.balance(settings.account);
    if (balance !== undefined && balance < settings.threshold) await this.claim(settings.account);
  }

  private claim(account: AccountRef, transaction?: unknown): Promise<Payment | undefined> {
    const id = newId('payment');
    const now = this.clock.now();
    const currency = this.settings.currency.toLowerCase();
    return this.repository.claim(
      account,
      id,
      (settings) =>
        pendingPayment({
          id,
          kind: 'auto_recharge',
          sessionId: null,
          account,
          userId: settings.configuredBy ?? (account.type === 'user' ? account.id : ''),
          amount: settings.amount!,
          minorAmount: Number(settings.amount! / nanosPerMinor(currency)),
          currency,
          createdAt: now,
        }),
      now,
      transaction,
    );
  }

  /** Records a declined attempt on its payment (once) and mails the customer; true when this call recorded it. */
  private async fail(payment: Payment, reason: string, paymentIntent: string | null): Promise<boolean> {
    const outcome = await this.payments.settle(payment.id, (current) =>
      current.status === 'pending' ? { changes: { status: 'failed', failure: reason, ...(paymentIntent ? { paymentIntent } : {}) }, entries: [] } : undefined,
    );
    if (!outcome) return false;
    if (outcome.applied) {
      this.logger.warn({ payment: payment.id, account: payment.account, reason }, 'auto-recharge charge failed');
      await this.audit.record(SYSTEM_ACTOR, 'payment.auto_recharge.failed', { type: 'payment', id: payment.id }, {
        after: { account: payment.account, amount: formatMoney(payment.amount), failure: reason },
        orgId: payment.account.type === 'org' ? payment.account.id : null,
      });
    }
    if (outcome.payment.status === 'failed') await this.notifyFailure(outcome.payment);
    return outcome.applied;
  }

  /** Mails the failure to the user, or to an org's owners; once per payment and recipient (the outbox's dedupe key). */
  private async notifyFailure(payment: Payment): Promise<void> {
    if (!this.mail.enabled) return;
    const { account } = payment;
    const recipients = account.type === 'user' ? [await this.mail.userEmail(account.id)].filter((email): email is string => email !== null) : await this.mail.ownerEmails(account.id);
    const settings = await this.repository.get(account);
    const content = autoRechargeFailedMail({
      account: account.type === 'user' ? 'your account' : `the organization ${await this.mail.orgName(account.id)}`,
      amount: formatMoney(payment.amount),
      currency: this.settings.currency,
      card: settings?.card ? `the ${settings.card.brand} card ending in ${settings.card.last4}` : 'the saved card',
      reason: payment.failure ?? 'the card was declined',
      url: `${this.settings.publicUrl.base.replace(/\/+$/, '')}/console/billing`,
    });
    for (const to of recipients) await this.mail.queue({ kind: 'auto_recharge_failed', to, dedupeKey: `auto-recharge-failed:${payment.id}:${to}`, ...content });
  }
}

/** The audit log's view of a choice (no card details beyond brand and last four). */
const shown = (settings: AutoRecharge) => ({
  enabled: settings.enabled,
  threshold: settings.threshold === null ? null : formatMoney(settings.threshold),
  amount: settings.amount === null ? null : formatMoney(settings.amount),
  card: settings.card ? `${settings.card.brand} ${settings.card.last4}` : null,
});
