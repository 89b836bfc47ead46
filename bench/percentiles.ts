/** Nearest-rank percentiles of one sample set, in the unit of the samples. */
export interface Distribution {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

export function distribution(samples: readonly number[]): Distribution {
  if (samples.length === 0) return { count: 0, p50: Number.NaN, p99: Number.NaN, max: Number.NaN };
  const sorted = Float64Array.from(samples).sort();
  const rank = (fraction: number): number => sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
  return { count: sorted.length, p50: rank(0.5), p99: rank(0.99), max: sorted[sorted.length - 1] ?? Number.NaN };
}

/** Milliseconds elapsed since a `process.hrtime.bigint()` reading. */
export function millisecondsSince(start: bigint): number {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** The middle of `values` (the mean of the two middle ones when their count is even). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
