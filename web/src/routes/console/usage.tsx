import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState } from 'react';
import { api, query } from '../../api/client.ts';
import type { List, UsageRow } from '../../api/types.ts';
import { DataTable } from '../../components/data-table.tsx';
import { FilterForm } from '../../components/filter-form.tsx';
import { LabelledInput, LabelledSelect } from '../../components/labelled-field.tsx';
import { ErrorNote } from '../../components/status.tsx';
import { TimeChart } from '../../components/time-chart.tsx';
import { daysAgo, daysBetween, today } from '../../lib/dates.ts';
import { sumMoney } from '../../lib/money.ts';
import { seriesBy } from '../../lib/series.ts';

type Dimension = 'model' | 'key' | 'endpoint';
const LABELS: Record<Dimension, string> = { model: 'Model', key: 'Key', endpoint: 'Endpoint' };
const DIMENSIONS = (Object.keys(LABELS) as Dimension[]).map((value) => ({ value, label: LABELS[value] }));
const sum = (rows: readonly UsageRow[], field: 'requests' | 'errors' | 'input_tokens' | 'output_tokens'): number => rows.reduce((total, row) => total + row[field], 0);
const valueOf = (row: UsageRow, dimension: Dimension): string => (dimension === 'model' ? row.model : dimension === 'key' ? row.keyId : row.endpoint) ?? '—';

function csvOf(rows: readonly UsageRow[], dimension: Dimension): string {
  const quote = (text: string | number) => (/[",\n]/.test(String(text)) ? `"${String(text).replace(/"/g, '""')}"` : String(text));
  const header = [dimension, 'requests', 'errors', 'input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'cost'];
  const lines = rows.map((row) => [valueOf(row, dimension), row.requests, row.errors, row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens, row.cost].map(quote).join(','));
  return [header.join(','), ...lines].join('\n') + '\n';
}

/** /console/usage: spend and tokens over time by model, key or endpoint; the totals table; CSV export. */
export function UsagePage() {
  const [range, setRange] = useState({ from: daysAgo(29), to: today(), dimension: 'model' as Dimension });
  const totals = useQuery({
    queryKey: ['usage', range.from, range.to, range.dimension],
    queryFn: () => api<List<UsageRow>>('GET', `/api/v1/usage${query({ from: range.from, to: range.to, groupBy: range.dimension })}`),
  });
  const daily = useQuery({
    queryKey: ['usage', range.from, range.to, `day,${range.dimension}`],
    queryFn: () => api<List<UsageRow>>('GET', `/api/v1/usage${query({ from: range.from, to: range.to, groupBy: `day,${range.dimension}` })}`),
  });
  const show = (values: Record<string, string>) => setRange({ from: values.from ?? range.from, to: values.to ?? range.to, dimension: (values.dimension ?? 'model') as Dimension });
  const days = daysBetween(range.from, range.to);
  const rows = totals.data?.data ?? [];
  // One object URL per answer, released when the next replaces it.
  const csv = useMemo(() => (totals.data ? URL.createObjectURL(new Blob([csvOf(totals.data.data, range.dimension)], { type: 'text/csv' })) : undefined), [totals.data, range.dimension]);
  useEffect(() => () => (csv ? URL.revokeObjectURL(csv) : undefined), [csv]);
  return (
    <>
      <h1>Usage</h1>
      <FilterForm label="Usage range" onApply={show} submitLabel="Show">
        <LabelledInput label="From (UTC)" name="from" type="date" defaultValue={range.from} required />
        <LabelledInput label="To (UTC)" name="to" type="date" defaultValue={range.to} required />
        <LabelledSelect label="Group by" name="dimension" defaultValue={range.dimension} choices={DIMENSIONS} />
      </FilterForm>
      <ErrorNote error={daily.error} what="Loading the charts" />
      {daily.data ? (
        <div className="charts">
          <section aria-labelledby="spend-title">
            <h2 id="spend-title">Spend by {LABELS[range.dimension].toLowerCase()}</h2>
            <TimeChart days={days} series={seriesBy(daily.data.data, days, (row) => valueOf(row, range.dimension), 'cost')} unit="" summary={`Daily spend by ${range.dimension}`} />
          </section>
          <section aria-labelledby="tokens-title">
            <h2 id="tokens-title">Tokens by {LABELS[range.dimension].toLowerCase()}</h2>
            <TimeChart days={days} series={seriesBy(daily.data.data, days, (row) => valueOf(row, range.dimension), 'tokens')} unit="tokens" summary={`Daily tokens by ${range.dimension}`} />
          </section>
        </div>
      ) : null}
      <section aria-labelledby="totals-title">
        <h2 id="totals-title">Totals</h2>
        <DataTable
          caption={`Usage from ${range.from} to ${range.to} by ${range.dimension}`}
          what="usage"
          empty={`No usage from ${range.from} to ${range.to}.`}
          rows={rows}
          rowKey={(row) => valueOf(row, range.dimension)}
          state={totals}
          columns={[
            { header: LABELS[range.dimension], cell: (row) => valueOf(row, range.dimension), rowHeader: true, total: () => 'Total' },
            { header: 'Requests', cell: (row) => row.requests, numeric: true, total: (all) => sum(all, 'requests') },
            { header: 'Errors', cell: (row) => row.errors, numeric: true, total: (all) => sum(all, 'errors') },
            { header: 'Input tokens', cell: (row) => row.input_tokens, numeric: true, total: (all) => sum(all, 'input_tokens') },
            { header: 'Output tokens', cell: (row) => row.output_tokens, numeric: true, total: (all) => sum(all, 'output_tokens') },
            { header: 'Cost', cell: (row) => row.cost, numeric: true, total: (all) => sumMoney(all.map((row) => row.cost)) },
          ]}
        />
        {rows.length > 0 ? (
          <a href={csv} download={`usage-${range.from}-${range.to}-by-${range.dimension}.csv`}>
            Export CSV
          </a>
        ) : null}
      </section>
    </>
  );
}
