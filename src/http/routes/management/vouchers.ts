import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { VouchersService } from '../../../features/vouchers/vouchers-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import { userActor } from '../../actors.ts';
import { principalOf } from './me.ts';

const redeemBody = z.object({ code: z.string().min(1).max(100), orgId: z.string().min(1).max(100).optional() });

/** POST /api/v1/vouchers/redeem (DESIGN §10): a code pays once, to the user or to an org they own or administer. */
export function registerVoucherRedeemRoute(app: FastifyInstance, vouchers: VouchersService): void {
  app.post('/api/v1/vouchers/redeem', { config: { auth: 'user', name: 'vouchers.redeem', doc: { summary: 'Redeem a voucher code (credits you or an org)', body: redeemBody } } }, async (request) => {
    const { user } = principalOf(request);
    const body = parseOrThrow(redeemBody, request.body);
    const redeemed = await vouchers.redeem(user.id, body.code, body.orgId, userActor(request, user.id));
    return { balance: formatMoney(redeemed.balance), amount: formatMoney(redeemed.voucher.amount), account: redeemed.account };
  });
}
