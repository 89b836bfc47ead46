import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { LedgerEntry, List, Payment, PaymentOptions } from '../../api/types.ts';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';
import { toMicros } from '../../lib/money.ts';
import { AutoRechargeSection } from './billing-auto-recharge.tsx';

/** /console/billing: balances, top up by card, redeem a voucher, the ledger and card payments of the chosen account. */
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
      <CardTopUp />
      <AutoRechargeIfEnabled />
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
      <CardPayments account={account} />
    </>
  );
}

const paymentOptionsQuery = { queryKey: ['payment-options'], queryFn: () => api<PaymentOptions>('GET', '/api/v1/payments/options'), staleTime: 60_000 };

/** Back from Stripe Checkout: its success and cancel URLs carry ?payment=<id> (and &cancelled=1). */
function CheckoutReturn() {
  const search = new URLSearchParams(window.location.search);
  if (!search.get('payment')) return null;
  return search.get('cancelled') ? (
    <p role="status">The card payment was cancelled; nothing was charged.</p>
  ) : (
    <p role="status">Thank you. The balance rises as soon as the card payment is confirmed (usually within a minute).</p>
  );
}

/** "Top up by card": shown only when the gateway has card payments on; sends the browser to the Checkout page the API made. */
function CardTopUp() {
  const me = useMe();
  const options = useQuery(paymentOptionsQuery);
  const [error, setError] = useState<unknown>(null);
  const checkout = useMutation({
    mutationFn: (body: { amount: string; orgId?: string }) => api<Payment & { url: string }>('POST', '/api/v1/payments/checkout', body),
    onSuccess: (payment) => window.location.assign(payment.url),
  });
  if (!options.data?.enabled) return <CheckoutReturn />;
  const { min, max, currency } = options.data;
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    const form = new FormData(event.currentTarget);
    const amount = String(form.get('amount') ?? '').trim();
    const orgId = String(form.get('orgId') ?? '');
    if (!/^\d+(\.\d+)?$/.test(amount) || toMicros(amount) < toMicros(min) || toMicros(amount) > toMicros(max)) {
      setError(new Error(`enter an amount from ${min} to ${max} ${currency.toUpperCase()}`));
      return;
    }
    checkout.mutate({ amount, ...(orgId ? { orgId } : {}) });
  };
  return (
    <section aria-labelledby="top-up">
      <h2 id="top-up">Top up by card</h2>
      <CheckoutReturn />
      <form onSubmit={submit} className="row" noValidate>
        <label>
          Amount ({currency.toUpperCase()})
          <input name="amount" inputMode="decimal" autoComplete="off" required placeholder={min} aria-describedby="top-up-bounds" />
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
        <button type="submit" disabled={checkout.isPending || checkout.isSuccess}>
          Pay by card
        </button>
      </form>
      <p id="top-up-bounds" className="muted">
        From {min} to {max} {currency.toUpperCase()}. You pay on Stripe's page; the balance rises once the payment is confirmed.
      </p>
      <ErrorNote error={error} what="Top-up" />
      <ErrorNote error={checkout.error} what="Starting the card payment failed" />
      {checkout.isSuccess ? <p role="status">Opening the payment page…</p> : null}
    </section>
  );
}

/** Auto-recharge needs card payments: shown only when the gateway has them on. */
function AutoRechargeIfEnabled() {
  const options = useQuery(paymentOptionsQuery);
  return options.data?.enabled ? <AutoRechargeSection options={options.data} /> : null;
}

/** The chosen account's card top-ups, newest first (hidden when card payments are off and there are none). */
function CardPayments({ account }: { account: string }) {
  const options = useQuery(paymentOptionsQuery);
  const payments = useQuery({
    queryKey: ['payments', account],
    queryFn: () => api<List<Payment>>('GET', `/api/v1/payments${query({ limit: 50, orgId: account })}`),
    enabled: options.data?.enabled === true,
  });
  if (!options.data?.enabled) return null;
  return (
    <section aria-labelledby="payments">
      <h2 id="payments">Card payments</h2>
      {payments.isPending ? <Loading what="card payments" /> : null}
      <ErrorNote error={payments.error} what="Loading card payments" />
      {payments.data && payments.data.data.length === 0 ? <p className="empty">No card payments for this account yet.</p> : null}
      {payments.data && payments.data.data.length > 0 ? (
        <div className="table-scroll">
          <table>
            <caption>Card payments of the account chosen above, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Started (UTC)</th>
                <th scope="col">Kind</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Paid (UTC)</th>
                <th scope="col">Refunded (smallest unit)</th>
              </tr>
            </thead>
            <tbody>
              {payments.data.data.map((payment) => (
                <tr key={payment.id}>
                  <td>{shortTime(payment.createdAt)}</td>
                  <td>{payment.kind === 'auto_recharge' ? 'auto-recharge' : 'top-up'}</td>
                  <td className="number">
                    {payment.amount} {payment.currency.toUpperCase()}
                  </td>
                  <td>{payment.lostDispute ? 'disputed (debited)' : payment.status === 'failed' ? `failed: ${payment.failure ?? 'declined'}` : payment.status}</td>
                  <td>{payment.paidAt ? shortTime(payment.paidAt) : '—'}</td>
                  <td className="number">{payment.refundedMinor > 0 ? payment.refundedMinor : '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
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
