/**
 * Money is an integer count of nano-units (10⁻⁹ of the gateway currency), held in a bigint.
 * Never a float: every amount that reaches a balance or a ledger is a Money.
 */
export type Money = bigint;

export const NANOS_PER_UNIT = 1_000_000_000n;
/** Charges are rounded to micro-units so that the 6-decimal `usage` numbers shown equal what is charged. */
export const NANOS_PER_MICRO = 1_000n;

const DECIMAL = /^(-)?(\d{1,12})(?:\.(\d{1,9}))?$/;

/** Parses decimal text ("12.50", "-3", "0.0025") into Money; undefined when it is not a decimal with ≤ 9 fraction digits. */
export function parseMoney(text: string): Money | undefined {
  const match = DECIMAL.exec(text.trim());
  if (!match) return undefined;
  const [, sign, whole, fraction = ''] = match;
  const nanos = BigInt(whole!) * NANOS_PER_UNIT + BigInt(fraction.padEnd(9, '0'));
  return sign ? -nanos : nanos;
}

/**
 * The largest amount that may enter from outside (a credit, a price, an initial balance): ±1,000,000,000 currency units.
 * Balances are 64-bit nano-unit columns (about ±9.2 × 10⁹ units); bounding what enters keeps every sum far from overflow.
 */
export const MAX_AMOUNT: Money = 1_000_000_000n * NANOS_PER_UNIT;
/** A balance may not be credited beyond this (the column's limit, with room for the charges in flight). */
export const MAX_BALANCE: Money = 9_000_000_000n * NANOS_PER_UNIT;
export const AMOUNT_RULE = 'must be a decimal number from -1000000000 to 1000000000 with at most 9 fraction digits';

/** `parseMoney` for amounts entering from outside: undefined also beyond ±MAX_AMOUNT. */
export function parseAmount(text: string): Money | undefined {
  const amount = parseMoney(text);
  return amount !== undefined && amount <= MAX_AMOUNT && amount >= -MAX_AMOUNT ? amount : undefined;
}

/** Decimal text with at least `minFraction` fraction digits and as many more as the amount needs (never rounds). */
export function formatMoney(amount: Money, minFraction = 2): string {
  const negative = amount < 0n;
  const absolute = negative ? -amount : amount;
  const whole = absolute / NANOS_PER_UNIT;
  let fraction = (absolute % NANOS_PER_UNIT).toString().padStart(9, '0').replace(/0+$/, '');
  if (fraction.length < minFraction) fraction = fraction.padEnd(minFraction, '0');
  return `${negative ? '-' : ''}${whole}${fraction ? '.' + fraction : ''}`;
}

/** Rounds half up (away from zero) to a multiple of `step`. */
export function roundTo(amount: Money, step: Money): Money {
  const negative = amount < 0n;
  const absolute = negative ? -amount : amount;
  const rounded = ((absolute + step / 2n) / step) * step;
  return negative ? -rounded : rounded;
}

/** Applies a multiplier given as decimal text (e.g. "0.1", "1.25") to a price, exactly to the nano. */
export function scalePrice(price: Money, multiplier: string): Money {
  const factor = parseMoney(multiplier);
  if (factor === undefined) throw new Error(`invalid multiplier ${multiplier}`);
  return (price * factor) / NANOS_PER_UNIT;
}

/** A Money as the number shown in `usage` blocks: currency units, 6 decimals. */
export function toUsageNumber(amount: Money): number {
  return Number(roundTo(amount, NANOS_PER_MICRO)) / 1e9;
}
