import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { Payment } from '../../../features/payments/payments.ts';
import type { PaymentsService } from '../../../features/payments/payments-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import { moneyInput } from '../admin/admin-schemas.ts';
import { principalOf } from './me.ts';
import { pageQuery } from './keys.ts';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A top-up as its payer (and the operator) sees it. */
export const paymentView = (payment: Payment) => ({
  id: payment.id,
  object: 'payment',
  sessionId: payment.sessionId,
  account: payment.account,
  userId: payment.userId,
  amount: formatMoney(payment.amount),
  currency: payment.currency,
  status: payment.status,
  refundedMinor: payment.refundedMinor,
  lostDispute: payment.lostDispute,
  createdAt: iso(payment.createdAt),
  paidAt: iso(payment.paidAt),
});

const checkoutBody = z.object({ amount: moneyInput, orgId: z.string().min(1).max(100).optional() }).strict();
const listQuery = z.object({ ...pageQuery, orgId: z.string().min(1).max(100).optional() });

/**
 * Card top-ups (DESIGN §15): GET /api/v1/payments/options, POST /api/v1/payments/checkout, GET /api/v1/payments, and the
 * vendor's webhook POST /api/v1/payments/stripe/webhook (public; its signature is the credential).
 */
export function registerPaymentRoutes(app: FastifyInstance, payments: PaymentsService): void {
  app.get('/api/v1/payments/options', { config: { auth: 'user', name: 'payments.options' } }, async () => payments.options());

  app.post('/api/v1/payments/checkout', { config: { auth: 'user', name: 'payments.checkout' } }, async (request) => {
    const body = parseOrThrow(checkoutBody, request.body ?? {});
    const { payment, url } = await payments.checkout(principalOf(request).user.id, { amount: body.amount, ...(body.orgId !== undefined ? { orgId: body.orgId } : {}) });
    return { ...paymentView(payment), url };
  });

  app.get('/api/v1/payments', { config: { auth: 'user', name: 'payments.list' } }, async (request) => {
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
    scope.post('/api/v1/payments/stripe/webhook', { config: { auth: 'none', name: 'payments.webhook' } }, async (request) => {
      const signature = request.headers['stripe-signature'];
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const outcome = await payments.receive(raw, typeof signature === 'string' ? signature : undefined);
      return { received: true, ...outcome };
    });
  });
}
