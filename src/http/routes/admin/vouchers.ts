import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { VOUCHER_STATES, voucherState, type Voucher } from '../../../features/vouchers/vouchers.ts';
import { MAX_VOUCHERS_PER_BATCH, type VouchersService } from '../../../features/vouchers/vouchers-service.ts';
import type { Clock } from '../../../lib/clock.ts';
import { formatMoney } from '../../../lib/money.ts';
import { adminActor } from '../../actors.ts';
import { isoTime, listOf, listQuery, moneyInput } from './admin-schemas.ts';

const createBody = z.object({
  amount: moneyInput,
  count: z.number().int().min(1).max(MAX_VOUCHERS_PER_BATCH).default(1),
  expiresAt: isoTime.nullable().optional(),
  note: z.string().max(500).nullable().optional(),
});
const voucherListQuery = listQuery.extend({ state: z.enum(VOUCHER_STATES).optional() });

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A voucher as the operator sees it: never the code, only its start. */
export const voucherView = (voucher: Voucher, now: number) => ({
  id: voucher.id,
  object: 'voucher' as const,
  codeStart: voucher.codeStart,
  amount: formatMoney(voucher.amount),
  note: voucher.note,
  state: voucherState(voucher, now),
  createdAt: iso(voucher.createdAt),
  expiresAt: iso(voucher.expiresAt),
  voidedAt: iso(voucher.voidedAt),
  redeemedAt: iso(voucher.redeemedAt),
  redeemedBy: voucher.redeemedBy,
  account: voucher.account,
  ledgerId: voucher.ledgerId,
});

/** POST, GET /admin/v1/vouchers, GET and DELETE (void) /admin/v1/vouchers/:id (DESIGN §4). */
export function registerVoucherRoutes(app: FastifyInstance, services: { vouchers: VouchersService; clock: Clock }): void {
  const { vouchers, clock } = services;

  app.post('/admin/v1/vouchers', { config: { doc: { summary: 'Create vouchers', body: createBody } } }, async (request) => {
    const body = parseOrThrow(createBody, request.body);
    const made = await vouchers.create({ amount: body.amount, count: body.count, expiresAt: body.expiresAt ?? null, note: body.note ?? null }, adminActor(request));
    const now = clock.now();
    return { codes: made.map(({ code }) => code), data: made.map(({ voucher, code }) => ({ ...voucherView(voucher, now), code })) };
  });

  app.get('/admin/v1/vouchers', { config: { doc: { summary: 'List vouchers', query: voucherListQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(voucherListQuery, request.query);
    const page = await vouchers.list({ limit: query.limit, ...(query.query ? { query: query.query } : {}), ...(query.cursor ? { cursor: query.cursor } : {}), ...(query.state ? { state: query.state } : {}) });
    const now = clock.now();
    return listOf(page.vouchers.map((voucher) => voucherView(voucher, now)), page.nextCursor);
  });

  app.get('/admin/v1/vouchers/:id', { config: { doc: { summary: 'One voucher' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return voucherView(await vouchers.get(id), clock.now());
  });

  app.delete('/admin/v1/vouchers/:id', { config: { doc: { summary: 'Revoke a voucher' } } }, async (request) => {
    const { id } = request.params as { id: string };
    return voucherView(await vouchers.void(id, adminActor(request)), clock.now());
  });
}
