import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { LedgerEntry, List, Payment, PaymentOptions } from '../../api/types.ts';
import { AccountSelect } from '../../components/account-select.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { LabelledInput } from '../../components/labelled-field.tsx';
import { ErrorNote } from '../../components/status.tsx';
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
        <DataTable
          caption="The balance of each account"
          what="balances"
          empty="No accounts."
          rows={me.data ? [{ id: '', name: 'You', balance: me.data.balance }, ...me.data.orgs] : []}
          rowKey={(account) => account.id}
          state={me}
          columns={[
            { header: 'Account', cell: (account) => account.name, rowHeader: true },
            { header: 'Balance', cell: (account) => account.balance, numeric: true },
          ]}
        />
      </section>
      <CardTopUp />
      <AutoRechargeIfEnabled />
      <RedeemVoucher />
      <section aria-labelledby="ledger">
        <h2 id="ledger">Ledger</h2>
        <AccountSelect label="Account" self="You" value={account} onChange={(event) => setAccount(event.target.value)} />
        <DataTable
          caption={ledger.data ? `The latest ${ledger.data.data.length} entries` : 'The latest entries'}
          what="the ledger"
          empty="No entries yet: charges, credits and vouchers appear here."
          rows={ledger.data?.data ?? []}
          rowKey={(entry) => entry.id}
          state={ledger}
          columns={[
            { header: 'Time (UTC)', cell: (entry) => shortTime(entry.at) },
            { header: 'Kind', cell: (entry) => entry.kind },
            { header: 'Amount', cell: (entry) => entry.amount, numeric: true },
            { header: 'Balance after', cell: (entry) => entry.balanceAfter, numeric: true },
            { header: 'Model', cell: (entry) => entry.model ?? '—' },
            { header: 'Note', cell: (entry) => entry.note ?? '' },
          ]}
        />
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
        <LabelledInput label={`Amount (${currency.toUpperCase()})`} name="amount" inputMode="decimal" autoComplete="off" required placeholder={min} aria-describedby="top-up-bounds" />
        <AccountSelect label="Credit to" self="You" managedOnly name="orgId" defaultValue="" />
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
      <DataTable
        caption="Card payments of the account chosen above, newest first"
        what="card payments"
        empty="No card payments for this account yet."
        rows={payments.data?.data ?? []}
        rowKey={(payment) => payment.id}
        state={payments}
        columns={[
          { header: 'Started (UTC)', cell: (payment) => shortTime(payment.createdAt) },
          { header: 'Kind', cell: (payment) => (payment.kind === 'auto_recharge' ? 'auto-recharge' : 'top-up') },
          { header: 'Amount', cell: (payment) => `${payment.amount} ${payment.currency.toUpperCase()}`, numeric: true },
          { header: 'Status', cell: (payment) => (payment.lostDispute ? 'disputed (debited)' : payment.status === 'failed' ? `failed: ${payment.failure ?? 'declined'}` : payment.status) },
          { header: 'Paid (UTC)', cell: (payment) => (payment.paidAt ? shortTime(payment.paidAt) : '—') },
          { header: 'Refunded (smallest unit)', cell: (payment) => (payment.refundedMinor > 0 ? payment.refundedMinor : '—'), numeric: true },
        ]}
      />
    </section>
  );
}

function RedeemVoucher() {
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
        <LabelledInput label="Voucher code" name="code" required autoComplete="off" />
        <AccountSelect label="Credit to" self="You" managedOnly name="orgId" defaultValue="" />
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
