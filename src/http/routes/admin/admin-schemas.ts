import { z } from 'zod';
import { AMOUNT_RULE, parseAmount } from '../../../lib/money.ts';
import { decodeIdCursor } from '../../../lib/id-cursor.ts';

/** Decimal text (or a JSON number, read as its decimal text) → Money. */
export const moneyInput = z
  .union([z.string(), z.number()])
  .transform((value, context) => {
    const amount = parseAmount(String(value));
    if (amount === undefined) {
      context.addIssue({ code: 'custom', message: AMOUNT_RULE });
      return z.NEVER;
    }
    return amount;
  });

export const accountQuery = z
  .object({ userId: z.string().min(1).optional(), orgId: z.string().min(1).optional() })
  .refine((query) => (query.userId === undefined) !== (query.orgId === undefined), { message: 'give exactly one of userId and orgId', path: ['userId'] });

export const accountOf = (query: { userId?: string | undefined; orgId?: string | undefined }): { type: 'user' | 'org'; id: string } =>
  query.userId !== undefined ? { type: 'user', id: query.userId } : { type: 'org', id: query.orgId! };

/** `?query=&limit=&cursor=` of every admin list (DESIGN §4); a cursor this gateway did not make is a 400. */
export const listQuery = z.object({
  query: z.string().min(1).max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .max(400)
    .refine((cursor) => decodeIdCursor(cursor) !== undefined, { message: 'is not a cursor from a previous page' })
    .optional(),
});

/** The list shape of every admin and management list. */
export const listOf = <T,>(data: T[], nextCursor: string | undefined) => ({ object: 'list' as const, data, next_cursor: nextCursor ?? null });

/** ISO 8601 time → Unix milliseconds. */
export const isoTime = z.iso.datetime({ offset: true }).transform((text) => Date.parse(text));
