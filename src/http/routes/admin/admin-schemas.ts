import { z } from 'zod';
import { AMOUNT_RULE, parseAmount } from '../../../lib/money.ts';

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
