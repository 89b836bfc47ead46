import { useQuery } from '@tanstack/react-query';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import type { List, UsageRow } from '../../api/types.ts';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { TimeChart } from '../../components/time-chart.tsx';
import { daysAgo, daysBetween, today } from '../../lib/dates.ts';
import { sumMoney } from '../../lib/money.ts';
import { seriesBy } from '../../lib/series.ts';

type Dimension = 'model' | 'key' | 'endpoint';
const LABELS: Record<Dimension, string> = { model: 'Model', key: 'Key', endpoint: 'Endpoint' };
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
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setRange({ from: String(form.get('from')), to: String(form.get('to')), dimension: String(form.get('dimension')) as Dimension });
  };
  const days = daysBetween(range.from, range.to);
  const rows = totals.data?.data ?? [];
  // One object URL per answer, released when the next replaces it.
  const csv = useMemo(() => (totals.data ? URL.createObjectURL(new Blob([csvOf(totals.data.data, range.dimension)], { type: 'text/csv' })) : undefined), [totals.data, range.dimension]);
  useEffect(() => () => (csv ? URL.revokeObjectURL(csv) : undefined), [csv]);
  return (
    <>
      <h1>Usage</h1>
      <form onSubmit={submit} className="row filters" aria-label="Usage range">
        <label>
          From (UTC)
          <input name="from" type="date" defaultValue={range.from} required />
        </label>
        <label>
          To (UTC)
          <input name="to" type="date" defaultValue={range.to} required />
        </label>
        <label>
          Group by
          <select name="dimension" defaultValue={range.dimension}>
            <option value="model">Model</option>
            <option value="key">Key</option>
            <option value="endpoint">Endpoint</option>
          </select>
        </label>
        <button type="submit">Show</button>
      </form>
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
        {totals.isPending ? <Loading what="usage" /> : null}
        <ErrorNote error={totals.error} what="Loading usage" />
        {totals.data && rows.length === 0 ? <p className="empty">No usage from {range.from} to {range.to}.</p> : null}
        {rows.length > 0 ? (
          <>
            <div className="table-scroll">
              <table>
                <caption>
                  Usage from {range.from} to {range.to} by {range.dimension}
                </caption>
                <thead>
                  <tr>
                    <th scope="col">{LABELS[range.dimension]}</th>
                    <th scope="col">Requests</th>
                    <th scope="col">Errors</th>
                    <th scope="col">Input tokens</th>
                    <th scope="col">Output tokens</th>
                    <th scope="col">Cost</th>
                  </tr>
                </thead>
                <tbody>
                  {rows.map((row) => (
                    <tr key={valueOf(row, range.dimension)}>
                      <th scope="row">{valueOf(row, range.dimension)}</th>
                      <td className="number">{row.requests}</td>
                      <td className="number">{row.errors}</td>
                      <td className="number">{row.input_tokens}</td>
                      <td className="number">{row.output_tokens}</td>
                      <td className="number">{row.cost}</td>
                    </tr>
                  ))}
                </tbody>
                <tfoot>
                  <tr>
                    <th scope="row">Total</th>
                    <td className="number">{rows.reduce((sum, row) => sum + row.requests, 0)}</td>
                    <td className="number">{rows.reduce((sum, row) => sum + row.errors, 0)}</td>
                    <td className="number">{rows.reduce((sum, row) => sum + row.input_tokens, 0)}</td>
                    <td className="number">{rows.reduce((sum, row) => sum + row.output_tokens, 0)}</td>
                    <td className="number">{sumMoney(rows.map((row) => row.cost))}</td>
                  </tr>
                </tfoot>
              </table>
            </div>
            <a href={csv} download={`usage-${range.from}-${range.to}-by-${range.dimension}.csv`}>
              Export CSV
            </a>
          </>
        ) : null}
      </section>
    </>
  );
}
