import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseMoney } from '../../lib/money.ts';
import { nextReservation } from './reservation.ts';

const money = (text: string) => parseMoney(text)!;

test('a process reserves a quarter of what the other processes leave, plus its own unwritten charges', () => {
  assert.equal(nextReservation(money('10.00'), 0n, 0n), money('2.50'));
  assert.equal(nextReservation(money('10.00'), money('2.50'), 0n), money('1.875'));
  assert.equal(nextReservation(money('10.00'), 0n, -money('1.00')), money('2.25') + money('1.00'));
});

test('near zero the slice is what is left, and nothing when the others hold it all', () => {
  assert.equal(nextReservation(money('0.02'), 0n, 0n), money('0.01'));
  assert.equal(nextReservation(money('0.005'), 0n, 0n), money('0.005'));
  assert.equal(nextReservation(money('1.00'), money('1.00'), 0n), 0n);
  assert.equal(nextReservation(money('1.00'), money('1.00'), -money('0.30')), money('0.30'));
  assert.equal(nextReservation(-money('1.00'), 0n, 0n), 0n);
});
