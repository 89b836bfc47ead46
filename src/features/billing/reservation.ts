import type { Money } from '../../lib/money.ts';

/** A reservation lapses this long after it was taken or last used, so a process that died frees its share. */
export const RESERVATION_TTL_MS = 30_000;
/** Each process reserves this share of what is left… */
const SHARE = 4n;
/** …but not less than this (0.01 of the currency), unless less is left. */
const MIN_SLICE: Money = 10_000_000n;

/**
 * The reservation a process should hold on an account: its own charges not yet written (`pendingSpend`, ≤ 0) plus a fresh
 * slice of what is left once the balance has paid for every other process's reservation. A quarter of what is left keeps
 * reservations rare when the balance is large and lets other processes take their own slices; near zero the slices shrink to
 * what is left, so the processes together never admit more than the balance plus the requests already in flight.
 */
export function nextReservation(balance: Money, reservedByOthers: Money, pendingSpend: Money): Money {
  const available = balance - reservedByOthers + pendingSpend;
  if (available <= 0n) return -pendingSpend;
  const share = available / SHARE;
  const slice = available <= MIN_SLICE ? available : share > MIN_SLICE ? share : MIN_SLICE;
  return slice - pendingSpend;
}
