import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { AutoRecharge, PaymentOptions } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';
import { toMicros } from '../../lib/money.ts';

const DECIMAL = /^\d+(\.\d+)?$/;

/** Back from Stripe's card page: its success and cancel URLs carry ?card=saved or ?card=cancelled. */
function CardSetupReturn() {
  const card = new URLSearchParams(window.location.search).get('card');
  if (card === 'saved') return <p role="status">Card saved. It shows here once Stripe confirms it (usually within a minute).</p>;
  if (card === 'cancelled') return <p role="status">Saving the card was cancelled; nothing changed.</p>;
  return null;
}

/**
 * "Auto-recharge" on /console/billing (issue 17): save a card on Stripe's page, then choose a threshold and an amount; a debit
 * that takes the balance below the threshold charges the card, at most once an hour. A failed charge shows here (and is mailed).
 */
export function AutoRechargeSection({ options }: { options: PaymentOptions }) {
  const me = useMe();
  const client = useQueryClient();
  const [account, setAccount] = useState('');
  const [error, setError] = useState<unknown>(null);
  const path = `/api/v1/payments/auto-recharge${query({ orgId: account })}`;
  const state = useQuery({ queryKey: ['auto-recharge', account], queryFn: () => api<AutoRecharge>('GET', path) });
  const refresh = (data: AutoRecharge) => client.setQueryData(['auto-recharge', account], data);
  const save = useMutation({ mutationFn: (body: Record<string, unknown>) => api<AutoRecharge>('PUT', '/api/v1/payments/auto-recharge', body), onSuccess: refresh });
  const setup = useMutation({
    mutationFn: () => api<{ url: string }>('POST', '/api/v1/payments/auto-recharge/card', account ? { orgId: account } : {}),
    onSuccess: (answer) => window.location.assign(answer.url),
  });
  const remove = useMutation({ mutationFn: () => api<AutoRecharge>('DELETE', path), onSuccess: refresh });
  const currency = options.currency.toUpperCase();

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    const form = new FormData(event.currentTarget);
    const enabled = form.get('enabled') === 'on';
    const threshold = String(form.get('threshold') ?? '').trim();
    const amount = String(form.get('amount') ?? '').trim();
    if (enabled && !DECIMAL.test(threshold)) return setError(new Error('enter the balance to recharge below, e.g. 10.00'));
    if (enabled && (!DECIMAL.test(amount) || toMicros(amount) < toMicros(options.min) || toMicros(amount) > toMicros(options.max))) {
      return setError(new Error(`enter an amount to add from ${options.min} to ${options.max} ${currency}`));
    }
    save.mutate({ enabled, ...(account ? { orgId: account } : {}), ...(DECIMAL.test(threshold) ? { threshold } : {}), ...(DECIMAL.test(amount) ? { amount } : {}) });
  };

  const data = state.data;
  const failed = data?.lastAttempt?.status === 'failed' ? data.lastAttempt : null;
  return (
    <section aria-labelledby="auto-recharge">
      <h2 id="auto-recharge">Auto-recharge</h2>
      <CardSetupReturn />
      <label className="inline">
        Recharge account
        <select value={account} onChange={(event) => setAccount(event.target.value)}>
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
      {state.isPending ? <Loading what="auto-recharge" /> : null}
      <ErrorNote error={state.error} what="Loading auto-recharge" />
      {data ? (
        <>
          <p id="auto-recharge-state">
            {data.enabled && data.card
              ? `On: when a charge takes the balance below ${data.threshold} ${currency}, the saved card is charged ${data.amount} ${currency} (at most once an hour).`
              : 'Off: the balance is never topped up by itself.'}
          </p>
          <p>{data.card ? `Saved card: ${data.card.brand} ending in ${data.card.last4}, expires ${String(data.card.expMonth).padStart(2, '0')}/${data.card.expYear}.` : 'No card saved.'}</p>
          {failed ? (
            <p role="alert" className="error">
              The last auto-recharge ({failed.amount} {currency}, {shortTime(failed.createdAt)} UTC) failed: {failed.failure ?? 'the card was declined'}. Auto-recharge stays on; top up by card or
              save another card.
            </p>
          ) : data.lastAttempt ? (
            <p className="muted">
              Last auto-recharge: {data.lastAttempt.amount} {currency}, {shortTime(data.lastAttempt.createdAt)} UTC, {data.lastAttempt.status}.
            </p>
          ) : null}
          <div className="row">
            <button type="button" onClick={() => setup.mutate()} disabled={setup.isPending || setup.isSuccess}>
              {data.card ? 'Replace the card' : 'Save a card'}
            </button>
            {data.card ? (
              <ConfirmButton
                label="Remove the card"
                title="Remove the saved card?"
                message="Auto-recharge is turned off until a card is saved again."
                confirmLabel="Remove the card"
                onConfirm={() => remove.mutate()}
                disabled={remove.isPending}
              />
            ) : null}
          </div>
          <form key={`${account}:${data.enabled}:${data.threshold}:${data.amount}`} onSubmit={submit} className="row" noValidate aria-describedby="auto-recharge-help">
            <label>
              <input type="checkbox" name="enabled" defaultChecked={data.enabled} disabled={!data.card} />
              Recharge automatically
            </label>
            <label>
              When the balance falls below ({currency})
              <input name="threshold" inputMode="decimal" autoComplete="off" defaultValue={data.threshold ?? ''} placeholder="10.00" />
            </label>
            <label>
              Add ({currency})
              <input name="amount" inputMode="decimal" autoComplete="off" defaultValue={data.amount ?? ''} placeholder={options.min} />
            </label>
            <button type="submit" disabled={save.isPending}>
              Save auto-recharge
            </button>
          </form>
          <p id="auto-recharge-help" className="muted">
            {data.card ? '' : 'Save a card first: you enter it on Stripe\'s page and pay nothing now. '}
            Each recharge adds between {options.min} and {options.max} {currency}. If the balance is already below the threshold, the card is charged when you save.
          </p>
        </>
      ) : null}
      <ErrorNote error={error} what="Auto-recharge" />
      <ErrorNote error={save.error} what="Saving auto-recharge failed" />
      <ErrorNote error={setup.error} what="Opening the card page failed" />
      <ErrorNote error={remove.error} what="Removing the card failed" />
      {save.isSuccess && !save.isPending ? <p role="status">Auto-recharge saved.</p> : null}
      {setup.isSuccess ? <p role="status">Opening the card page…</p> : null}
    </section>
  );
}
