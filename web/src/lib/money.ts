/** Decimal money text ↔ integer micro-units: sums of costs are exact, as the API's are (never floats for money). */
export function toMicros(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole = '0', fraction = ''] = text.replace('-', '').split('.');
  const value = BigInt(whole || '0') * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6) || '0');
  return negative ? -value : value;
}

/** Micro-units → decimal text with at least `digits` fraction digits (more when the amount has them). */
export function fromMicros(micros: bigint, digits = 2): string {
  const negative = micros < 0n;
  const absolute = negative ? -micros : micros;
  const whole = absolute / 1_000_000n;
  let fraction = (absolute % 1_000_000n).toString().padStart(6, '0').replace(/0+$/, '');
  if (fraction.length < digits) fraction = fraction.padEnd(digits, '0');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export const sumMoney = (texts: readonly string[]): string => fromMicros(texts.reduce((total, text) => total + toMicros(text), 0n));

/** For charts only (a plotted height, never a stored or summed amount). */
export const plotValue = (text: string): number => Number(toMicros(text)) / 1_000_000;
