import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Payment } from '../../../features/payments/payments.ts';
import type { PaymentsService } from '../../../features/payments/payments-service.ts';
import type { AutoRechargeService, AutoRechargeState } from '../../../features/payments/auto-recharge-service.ts';
import { RECHARGE_INTERVAL_MS } from '../../../features/payments/auto-recharge.ts';
import { actorOf } from './actor.ts';
import { formatMoney } from '../../../lib/money.ts';
import { moneyInput } from '../admin/admin-schemas.ts';
import { principalOf } from './me.ts';
import { pageQuery } from './keys.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A top-up as its payer (and the operator) sees it. */
export const paymentView = (payment: Payment) => ({
  id: payment.id,
  object: 'payment',
  kind: payment.kind,
  sessionId: payment.sessionId,
  paymentIntent: payment.paymentIntent,
  account: payment.account,
  userId: payment.userId,
  amount: formatMoney(payment.amount),
  currency: payment.currency,
  status: payment.status,
  refundedMinor: payment.refundedMinor,
  lostDispute: payment.lostDispute,
  failure: payment.failure,
  createdAt: iso(payment.createdAt),
  paidAt: iso(payment.paidAt),
});

const orgIdField = z.string().min(1).max(100).optional();
const checkoutBody = z.object({ amount: moneyInput, orgId: orgIdField }).strict();
const autoRechargeQuery = z.object({ orgId: orgIdField });
const autoRechargeBody = z.object({ orgId: orgIdField, enabled: z.boolean(), threshold: moneyInput.optional(), amount: moneyInput.optional() }).strict();
const cardSetupBody = z.object({ orgId: orgIdField }).strict();

/** An account's auto-recharge as its owner sees it: the choice, the saved card (brand, last four), the last attempt. */
const autoRechargeView = ({ settings, lastPayment }: AutoRechargeState) => ({
  object: 'auto_recharge',
  account: settings.account,
  enabled: settings.enabled,
  threshold: settings.threshold === null ? null : formatMoney(settings.threshold),
  amount: settings.amount === null ? null : formatMoney(settings.amount),
  card: settings.card && { brand: settings.card.brand, last4: settings.card.last4, expMonth: settings.card.expMonth, expYear: settings.card.expYear },
  lastAttempt: lastPayment ? paymentView(lastPayment) : null,
  /** The hourly rule: no attempt before this time. */
  nextAttemptAfter: iso(settings.lastAttemptAt === null ? null : settings.lastAttemptAt + RECHARGE_INTERVAL_MS),
});
const listQuery = z.object({ ...pageQuery, orgId: z.string().min(1).max(100).optional() });

/**
 * Card top-ups (DESIGN §15): GET /api/v1/payments/options, POST /api/v1/payments/checkout, GET /api/v1/payments, and the
 * vendor's webhook POST /api/v1/payments/stripe/webhook (public; its signature is the credential).
 */
export function registerPaymentRoutes(app: FastifyInstance, payments: PaymentsService, autoRecharge: AutoRechargeService): void {
  registerAutoRechargeRoutes(app, autoRecharge);
  app.get('/api/v1/payments/options', { config: { auth: 'user', name: 'payments.options', doc: { summary: 'Whether card top-ups are on, and their bounds' } } }, async () => payments.options());

  app.post('/api/v1/payments/checkout', { config: { auth: 'user', name: 'payments.checkout', doc: { summary: 'Start a card top-up (a Stripe Checkout Session to pay at)', body: checkoutBody } } }, async (request) => {
    const body = parseOrThrow(checkoutBody, request.body ?? {});
    const { payment, url } = await payments.checkout(principalOf(request).user.id, { amount: body.amount, ...(body.orgId !== undefined ? { orgId: body.orgId } : {}) });
    return { ...paymentView(payment), url };
  });

  app.get('/api/v1/payments', { config: { auth: 'user', name: 'payments.list', doc: { summary: 'Your (or an org\'s) card top-ups', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query ?? {});
    const page = await payments.list(principalOf(request).user.id, {
      limit: query.limit,
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(query.orgId !== undefined ? { orgId: query.orgId } : {}),
    });
    return { object: 'list', data: page.payments.map(paymentView), next_cursor: page.nextCursor ?? null };
  });

  // The signature covers the exact bytes sent, so this route reads its body raw (its own scope's parser).
  void app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post('/api/v1/payments/stripe/webhook', { config: { auth: 'none', name: 'payments.webhook', doc: { summary: "Stripe's signed events (credits, refunds, lost disputes, saved cards, auto-recharge outcomes)", description: 'Verified with STRIPE_WEBHOOK_SECRET over the raw body; each event applies once however often it is delivered.' } } }, async (request) => {
      const signature = request.headers['stripe-signature'];
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await payments.receive(raw, typeof signature === 'string' ? signature : undefined);
      return { received: true, ...outcome };
    });
  });
}

/**
 * Auto-recharge (issue 17): GET and PUT /api/v1/payments/auto-recharge (`{enabled, threshold, amount}`), POST
 * /api/v1/payments/auto-recharge/card (a setup Checkout Session to save the card at), DELETE of the card; `orgId` for an org.
 */
function registerAutoRechargeRoutes(app: FastifyInstance, autoRecharge: AutoRechargeService): void {
  app.get('/api/v1/payments/auto-recharge', { config: { auth: 'user', name: 'payments.auto_recharge.get', doc: { summary: 'Auto-recharge of your (or an org\'s) balance: threshold, amount, saved card, last attempt', query: autoRechargeQuery } } }, async (request) => {
    const query = parseOrThrow(autoRechargeQuery, request.query ?? {});
    return autoRechargeView(await autoRecharge.state(principalOf(request).user.id, query.orgId));
  });

  app.put('/api/v1/payments/auto-recharge', { config: { auth: 'user', name: 'payments.auto_recharge.update', doc: { summary: 'Turn auto-recharge on or off; set its threshold and amount', description: 'Turning it on needs a saved card. A debit that takes the balance below the threshold charges the card off-session, at most once an hour; the signed payment event credits it.', body: autoRechargeBody } } }, async (request) => {
    const body = parseOrThrow(autoRechargeBody, request.body ?? {});
    return autoRechargeView(
      await autoRecharge.configure(actorOf(request), {
        enabled: body.enabled,
        ...(body.orgId !== undefined ? { orgId: body.orgId } : {}),
        ...(body.threshold !== undefined ? { threshold: body.threshold } : {}),
        ...(body.amount !== undefined ? { amount: body.amount } : {}),
      }),
    );
  });

  app.post('/api/v1/payments/auto-recharge/card', { config: { auth: 'user', name: 'payments.auto_recharge.card', doc: { summary: 'Save a card for auto-recharge (a Stripe Checkout Session in setup mode to enter it at)', body: cardSetupBody } } }, async (request) => {
    const body = parseOrThrow(cardSetupBody, request.body ?? {});
    const setup = await autoRecharge.startCardSetup(principalOf(request).user.id, body.orgId);
    return { id: setup.sessionId, object: 'card_setup', url: setup.url };
  });

  app.delete('/api/v1/payments/auto-recharge/card', { config: { auth: 'user', name: 'payments.auto_recharge.card_remove', doc: { summary: 'Forget the saved card (turns auto-recharge off)', query: autoRechargeQuery } } }, async (request) => {
    const query = parseOrThrow(autoRechargeQuery, request.query ?? {});
    return autoRechargeView(await autoRecharge.removeCard(actorOf(request), query.orgId));
  });
}
