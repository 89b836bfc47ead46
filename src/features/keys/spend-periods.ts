import type { SpendPeriod } from './keys.ts';

export const DAY_MS = 86_400_000;

/** The UTC midnight (Unix ms) of the day `at` falls in: the day a ledger entry's key spend is counted in (key_spend_daily). */
export function utcDayStart(at: number): number {
  return at - (((at % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * Start (Unix ms) of the UTC calendar period that contains `now`: the day from midnight, the ISO week from Monday, the month
 * from its first day; `total` has no start. A key's limit counts what it spent since then. Every start is a UTC midnight
 * (or 0): a period is a whole number of days, so its spend is a sum of days (key_spend_daily).
 */
export function periodStart(period: SpendPeriod, now: number): number {
  if (period === 'total') return 0;
  const date = new Date(now);
  const midnight = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  if (period === 'day') return midnight;
  if (period === 'month') return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
  // getUTCDay: Sunday is 0; ISO weeks start on Monday.
  const daysSinceMonday = (date.getUTCDay() + 6) % 7;
  return midnight - daysSinceMonday * DAY_MS;
}

/** Start (Unix ms) of the period after the one that starts at `start` (a `periodStart`); `total` never ends. */
export function periodEnd(period: SpendPeriod, start: number): number {
  if (period === 'total') return Number.POSITIVE_INFINITY;
  if (period === 'day') return start + DAY_MS;
  if (period === 'week') return start + 7 * DAY_MS;
  const date = new Date(start);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
}
