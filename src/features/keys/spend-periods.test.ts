import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY_MS, periodEnd, periodStart, utcDayStart } from './spend-periods.ts';

test('each period ends where the next begins: the instant before its end is still in it, its end starts the next', () => {
  // Every 7 hours over four years: month ends of 28, 29, 30 and 31 days, year ends, weeks across months.
  for (let now = Date.UTC(2026, 0, 1); now < Date.UTC(2030, 0, 1); now += 7 * 3_600_000 + 1_234) {
    for (const period of ['day', 'week', 'month'] as const) {
      const start = periodStart(period, now);
      const end = periodEnd(period, start);
      assert.ok(start <= now && now < end, `${period} at ${new Date(now).toISOString()}`);
      assert.equal(periodStart(period, end - 1), start, `${period}: the last millisecond belongs to it`);
      assert.equal(periodStart(period, end), end, `${period}: its end is the next one's start`);
      assert.equal(utcDayStart(start), start, 'every period starts at a UTC midnight');
    }
  }
  assert.equal(periodEnd('month', Date.UTC(2028, 1, 1)), Date.UTC(2028, 2, 1), 'a leap February');
  assert.equal(periodEnd('week', Date.UTC(2026, 10, 23)) - Date.UTC(2026, 10, 23), 7 * DAY_MS);
  assert.equal(periodEnd('total', periodStart('total', Date.now())), Number.POSITIVE_INFINITY);
  assert.equal(utcDayStart(Date.UTC(2026, 10, 28, 23, 59, 59, 999)), Date.UTC(2026, 10, 28));
});
