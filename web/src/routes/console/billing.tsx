import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { LedgerEntry, List } from '../../api/types.ts';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

/** /console/billing: balances, redeem a voucher, the ledger of the chosen account. */
export function BillingPage() {
  const me = useMe();
  const [account, setAccount] = useState('');
  const ledger = useQuery({ queryKey: ['ledger', account], queryFn: () => api<List<LedgerEntry>>('GET', `/api/v1/ledger${query({ limit: 50, orgId: account })}`) });
  return (
    <>
      <h1>Billing</h1>
      <section aria-labelledby="balances">
        <h2 id="balances">Balances</h2>
        {me.isPending ? <Loading what="balances" /> : null}
        <ErrorNote error={me.error} what="Loading balances" />
        {me.data ? (
          <table>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Balance</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">You</th>
                <td className="number">{me.data.balance}</td>
              </tr>
              {me.data.orgs.map((org) => (
                <tr key={org.id}>
                  <th scope="row">{org.name}</th>
                  <td className="number">{org.balance}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
      <RedeemVoucher />
      <section aria-labelledby="ledger">
        <h2 id="ledger">Ledger</h2>
        <label className="inline">
          Account
          <select value={account} onChange={(event) => setAccount(event.target.value)}>
            <option value="">You</option>
            {me.data?.orgs.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name}
              </option>
            ))}
          </select>
        </label>
        {ledger.isPending ? <Loading what="the ledger" /> : null}
        <ErrorNote error={ledger.error} what="Loading the ledger" />
        {ledger.data && ledger.data.data.length === 0 ? <p className="empty">No entries yet: charges, credits and vouchers appear here.</p> : null}
        {ledger.data && ledger.data.data.length > 0 ? (
          <div className="table-scroll">
            <table>
              <caption>The latest {ledger.data.data.length} entries</caption>
              <thead>
                <tr>
                  <th scope="col">Time (UTC)</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Balance after</th>
                  <th scope="col">Model</th>
                  <th scope="col">Note</th>
                </tr>
              </thead>
              <tbody>
                {ledger.data.data.map((entry) => (
                  <tr key={entry.id}>
                    <td>{shortTime(entry.at)}</td>
                    <td>{entry.kind}</td>
                    <td className="number">{entry.amount}</td>
                    <td className="number">{entry.balanceAfter}</td>
                    <td>{entry.model ?? '—'}</td>
                    <td>{entry.note ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}

function RedeemVoucher() {
  const me = useMe();
  const client = useQueryClient();
  const redeem = useMutation({
    mutationFn: (body: { code: string; orgId?: string }) => api<{ balance: string; amount: string }>('POST', '/api/v1/vouchers/redeem', body),
    onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['me'] }), client.invalidateQueries({ queryKey: ['ledger'] })]),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const orgId = String(form.get('orgId') ?? '');
    redeem.mutate({ code: String(form.get('code') ?? '').trim(), ...(orgId ? { orgId } : {}) });
  };
  return (
    <section aria-labelledby="redeem">
      <h2 id="redeem">Redeem a voucher</h2>
      <form onSubmit={submit} className="row">
        <label>
          Voucher code
          <input name="code" required autoComplete="off" />
        </label>
        <label>
          Credit to
          <select name="orgId" defaultValue="">
            <option value="">You</option>
            {me.data?.orgs
              .filter((org) => org.role !== 'member')
              .map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
          </select>
        </label>
        <button type="submit" disabled={redeem.isPending}>
          Redeem
        </button>
      </form>
      <ErrorNote error={redeem.error} what="Redeeming failed" />
      {redeem.data ? (
        <p role="status">
          Added {redeem.data.amount}. The balance is now {redeem.data.balance}.
        </p>
      ) : null}
    </section>
  );
}
