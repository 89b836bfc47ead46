/** Dates as the API takes them: UTC calendar days, YYYY-MM-DD. */
export const DAY_MS = 86_400_000;

export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

export const today = (): string => utcDay(Date.now());

export const daysAgo = (days: number): string => utcDay(Date.now() - days * DAY_MS);

export const firstOfMonth = (): string => `${today().slice(0, 8)}01`;

/** Every day from `from` to `to`, inclusive. */
export function daysBetween(from: string, to: string): string[] {
  const days: string[] = [];
  for (let ms = Date.parse(`${from}T00:00:00Z`); ms <= Date.parse(`${to}T00:00:00Z`); ms += DAY_MS) days.push(utcDay(ms));
  return days;
}

export const shortTime = (iso: string | null): string => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '—');
