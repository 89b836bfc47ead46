import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatMoney, parseMoney, roundTo, scalePrice, toUsageNumber } from './money.ts';

test('parses decimal text exactly, to the nano', () => {
  assert.equal(parseMoney('12.50'), 12_500_000_000n);
  assert.equal(parseMoney('-3'), -3_000_000_000n);
  assert.equal(parseMoney('0.000000001'), 1n);
  assert.equal(parseMoney('0.0025'), 2_500_000n);
});

test('rejects what is not a decimal with at most 9 fraction digits', () => {
  for (const bad of ['abc', '1e3', '0.0000000001', '', '1.', '.5', '1,5', 'NaN']) assert.equal(parseMoney(bad), undefined, bad);
});

test('formats without losing digits, padding to the minimum fraction', () => {
  assert.equal(formatMoney(12_500_000_000n), '12.50');
  assert.equal(formatMoney(2_500_000n, 4), '0.0025');
  assert.equal(formatMoney(1_250_000n, 4), '0.00125');
  assert.equal(formatMoney(-1n), '-0.000000001');
  assert.equal(formatMoney(0n), '0.00');
});

test('rounds half away from zero', () => {
  assert.equal(roundTo(1_500n, 1_000n), 2_000n);
  assert.equal(roundTo(1_499n, 1_000n), 1_000n);
  assert.equal(roundTo(-1_500n, 1_000n), -2_000n);
});

test('usage numbers show micro-units exactly', () => {
  assert.equal(toUsageNumber(8_000n), 0.000008);
});

test('scales prices by decimal multipliers exactly', () => {
  assert.equal(scalePrice(parseMoney('0.0030')!, '0.1'), parseMoney('0.0003'));
  assert.equal(scalePrice(parseMoney('0.0030')!, '1.25'), parseMoney('0.00375'));
});
