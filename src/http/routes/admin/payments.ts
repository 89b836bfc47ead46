import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { invalidParam } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { PaymentsService } from '../../../features/payments/payments-service.ts';
import { pageQuery } from '../management/keys.ts';
import { paymentView } from '../management/payments.ts';

const listQuery = z.object({ ...pageQuery, userId: z.string().min(1).optional(), orgId: z.string().min(1).optional() });

/** GET /admin/v1/payments[?userId=|orgId=]: card top-ups of every account, or of one, newest first. */
export function registerAdminPaymentRoutes(app: FastifyInstance, payments: PaymentsService): void {
  app.get('/admin/v1/payments', async (request) => {
    const query = parseOrThrow(listQuery, request.query ?? {});
    if (query.userId !== undefined && query.orgId !== undefined) throw invalidParam('orgId', 'give userId or orgId, not both');
    const account = query.userId !== undefined ? { type: 'user' as const, id: query.userId } : query.orgId !== undefined ? { type: 'org' as const, id: query.orgId } : undefined;
    const page = await payments.listAll({ limit: query.limit, ...(account ? { account } : {}), ...(query.cursor !== undefined ? { cursor: query.cursor } : {}) });
    return { object: 'list', data: page.payments.map(paymentView), next_cursor: page.nextCursor ?? null };
  });
}
