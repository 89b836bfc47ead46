import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api, query } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { List, RequestRow, UsageRow } from '../../api/types.ts';
import { RequestsTable } from '../../components/requests-table.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { TimeChart } from '../../components/time-chart.tsx';
import { seriesBy } from '../../lib/series.ts';
import { daysAgo, daysBetween, firstOfMonth, today } from '../../lib/dates.ts';
import { sumMoney } from '../../lib/money.ts';

/** /console: balances, spend today and this month, 30 days of spend by model, the latest requests. */
export function OverviewPage() {
  const me = useMe();
  const to = today();
  const from = daysAgo(29);
  const monthStart = firstOfMonth() < from ? firstOfMonth() : from;
  const usage = useQuery({
    queryKey: ['usage', monthStart, to, 'day,model'],
    queryFn: () => api<List<UsageRow>>('GET', `/api/v1/usage${query({ from: monthStart, to, groupBy: 'day,model' })}`),
  });
  const recent = useQuery({ queryKey: ['requests', 'recent'], queryFn: () => api<List<RequestRow>>('GET', '/api/v1/requests?limit=10') });
  const rows = usage.data?.data ?? [];
  const spendToday = sumMoney(rows.filter((row) => row.day === to).map((row) => row.cost));
  const spendMonth = sumMoney(rows.filter((row) => (row.day ?? '') >= firstOfMonth()).map((row) => row.cost));
  const days = daysBetween(from, to);
  const chart = seriesBy(rows.filter((row) => (row.day ?? '') >= from), days, (row) => row.model ?? 'other', 'cost');
  return (
    <>
      <h1>Overview</h1>
      <section aria-labelledby="balances">
        <h2 id="balances">Balances and spend</h2>
        {me.isPending ? <Loading what="balances" /> : null}
        <ErrorNote error={me.error} what="Loading balances" />
        <ErrorNote error={usage.error} what="Loading spend" />
        <dl className="figures">
          <div>
            <dt>Your balance</dt>
            <dd>{me.data?.balance ?? '…'}</dd>
          </div>
          {me.data?.orgs.map((org) => (
            <div key={org.id}>
              <dt>{org.name} balance</dt>
              <dd>{org.balance}</dd>
            </div>
          ))}
          <div>
            <dt>Spend today</dt>
            <dd>{usage.data ? spendToday : '…'}</dd>
          </div>
          <div>
            <dt>Spend this month</dt>
            <dd>{usage.data ? spendMonth : '…'}</dd>
          </div>
        </dl>
      </section>
      <section aria-labelledby="spend-chart">
        <h2 id="spend-chart">Spend over the last 30 days by model</h2>
        {usage.data ? (
          chart.length > 0 ? (
            <TimeChart days={days} series={chart} unit="" summary={`Daily spend by model from ${from} to ${to}`} />
          ) : (
            <p className="empty">
              No spend in the last 30 days. <Link to="/console/keys">Create an API key</Link> and make your first call.
            </p>
          )
        ) : null}
      </section>
      <section aria-labelledby="recent">
        <h2 id="recent">Recent requests</h2>
        <RequestsTable rows={recent.data?.data ?? []} caption="The 10 latest requests" state={recent} empty="No requests yet." />
        {recent.data && recent.data.data.length > 0 ? (
          <p>
            <Link to="/console/requests">All requests</Link>
          </p>
        ) : null}
      </section>
    </>
  );
}
