import type { UsageRow } from '../api/types.ts';
import { plotValue } from './money.ts';
import type { ChartSeries } from '../components/time-chart.tsx';

export type Measure = 'cost' | 'tokens';

const measureOf = (row: UsageRow, measure: Measure): number => (measure === 'cost' ? plotValue(row.cost) : row.input_tokens + row.output_tokens);

/** Rows grouped by day and one dimension → one chart series per dimension value, one point per day (0 when absent). */
export function seriesBy(rows: readonly UsageRow[], days: readonly string[], label: (row: UsageRow) => string, measure: Measure): ChartSeries[] {
  const index = new Map(days.map((day, position) => [day, position]));
  const series = new Map<string, number[]>();
  for (const row of rows) {
    const position = row.day === undefined ? undefined : index.get(row.day);
    if (position === undefined) continue;
    const name = label(row);
    let values = series.get(name);
    if (!values) series.set(name, (values = days.map(() => 0)));
    values[position] = (values[position] ?? 0) + measureOf(row, measure);
  }
  return [...series.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([name, values]) => ({ label: name, values }));
}
