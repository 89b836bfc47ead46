import { z } from 'zod';
import { invalidParam } from '../../../core/errors.ts';
import type { LedgerLine } from '../../../features/usage/usage-service.ts';
import type { RequestLogRow, UsageDimension, UsageRow } from '../../../features/usage/request-log.ts';
import { formatMoney } from '../../../lib/money.ts';

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
/** The widest /usage range, in days: a rollup query stays bounded. */
const MAX_USAGE_DAYS = 366;
const DIMENSIONS: readonly UsageDimension[] = ['day', 'model', 'key', 'endpoint'];

/** A day (YYYY-MM-DD, UTC) or an ISO 8601 time; a day as `to` means its end. */
const instant = (edge: 'from' | 'to') =>
  z.string().transform((text, context) => {
    const ms = DAY.test(text) ? Date.parse(`${text}T00:00:00Z`) + (edge === 'to' ? DAY_MS - 1 : 0) : Date.parse(text);
    if (Number.isNaN(ms)) {
      context.addIssue({ code: 'custom', message: 'must be a date (YYYY-MM-DD) or an ISO 8601 time' });
      return z.NEVER;
    }
    return ms;
  });

const day = z.string().regex(DAY, 'must be a date as YYYY-MM-DD').refine((text) => !Number.isNaN(Date.parse(`${text}T00:00:00Z`)), 'must be a real date');

export const limitSchema = z.coerce.number().int().min(1).max(100).default(20);

export const requestsQuerySchema = z.strictObject({
  orgId: z.string().min(1).optional(),
  limit: limitSchema,
  cursor: z.string().min(1).max(200).optional(),
  keyId: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  status: z.coerce.number().int().min(100).max(599).optional(),
  from: instant('from').optional(),
  to: instant('to').optional(),
});

const usageFields = {
    orgId: z.string().min(1).optional(),
    from: day,
    to: day,
    groupBy: z
      .string()
      .optional()
      .transform((text, context) => {
        const parts = text ? text.split(',').map((part) => part.trim()).filter(Boolean) : [];
        const unknown = parts.find((part) => !DIMENSIONS.includes(part as UsageDimension));
        if (unknown !== undefined) {
          context.addIssue({ code: 'custom', message: `must be a comma-separated subset of ${DIMENSIONS.join(', ')}` });
          return z.NEVER;
        }
        return DIMENSIONS.filter((dimension) => parts.includes(dimension));
      }),
};

function checkRange(query: { from: string; to: string }, context: z.RefinementCtx): void {
  const span = (Date.parse(query.to) - Date.parse(query.from)) / DAY_MS;
  if (span < 0) context.addIssue({ code: 'custom', path: ['to'], message: 'must not be before from' });
  else if (span >= MAX_USAGE_DAYS) context.addIssue({ code: 'custom', path: ['to'], message: `must be within ${MAX_USAGE_DAYS} days of from` });
}

export const usageQuerySchema = z.strictObject(usageFields).superRefine(checkRange);

/** The admin's /usage query: any account, or one user's or org's. */
export const adminUsageQuerySchema = z.strictObject({ ...usageFields, userId: z.string().min(1).optional() }).superRefine(checkRange);

export const ledgerQuerySchema = z.strictObject({ orgId: z.string().min(1).optional(), limit: limitSchema, cursor: z.string().min(1).max(200).optional() });

/** Query strings arrive as objects of strings; anything else is a client error, not a crash. */
export const queryOf = (query: unknown): Record<string, unknown> => {
  if (query === null || typeof query !== 'object') throw invalidParam('query', 'is invalid');
  return query as Record<string, unknown>;
};

const iso = (ms: number): string => new Date(ms).toISOString();

export const requestView = (row: RequestLogRow) => ({
  id: row.id,
  created: iso(row.created),
  keyId: row.keyId,
  userId: row.userId,
  orgId: row.orgId,
  endpoint: row.endpoint,
  model: row.model,
  servedModel: row.servedModel,
  provider: row.provider,
  channel: row.channel,
  attempts: row.attempts,
  stream: row.stream,
  status: row.status,
  error_type: row.errorType,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  cache_read_tokens: row.cacheReadTokens,
  cache_write_tokens: row.cacheWriteTokens,
  cost: formatMoney(row.cost),
  latency_ms: row.latencyMs,
  ttft_ms: row.ttftMs,
});

export const usageView = (row: UsageRow) => ({
  ...(row.day !== undefined ? { day: row.day } : {}),
  ...(row.model !== undefined ? { model: row.model } : {}),
  ...(row.keyId !== undefined ? { keyId: row.keyId } : {}),
  ...(row.endpoint !== undefined ? { endpoint: row.endpoint } : {}),
  requests: row.requests,
  errors: row.errors,
  input_tokens: row.inputTokens,
  output_tokens: row.outputTokens,
  cache_read_tokens: row.cacheReadTokens,
  cache_write_tokens: row.cacheWriteTokens,
  cost: formatMoney(row.cost),
});

export const ledgerView = (line: LedgerLine) => ({
  id: line.id,
  at: iso(line.createdAt),
  kind: line.kind,
  amount: formatMoney(line.amount),
  balanceAfter: formatMoney(line.balanceAfter),
  requestId: line.requestId,
  keyId: line.keyId ?? null,
  model: line.model,
  note: line.description,
});
