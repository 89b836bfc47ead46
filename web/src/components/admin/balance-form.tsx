import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type FormEvent } from 'react';
import type { AccountRef } from '../../api/admin-types.ts';
import { ApiError, api } from '../../api/client.ts';
import { LabelledInput } from '../labelled-field.tsx';
import { ErrorNote } from '../status.tsx';

const AMOUNT = /^\d{1,10}(\.\d{1,9})?$/;

/** 128 random bits as hex (crypto.randomUUID needs a secure context; a gateway on a LAN address over http is not one). */
function randomKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * "Credit" or "Debit" an account by an amount, with a required note (kept in the ledger and the audit log). The same
 * amount and note sent again after an unanswered attempt carry the same Idempotency-Key, so a retry never books twice;
 * once answered, the next submission is a new booking.
 */
export function BalanceForm({ account }: { account: AccountRef }) {
  const client = useQueryClient();
  const attempt = useRef<{ body: string; key: string } | null>(null);
  const [invalid, setInvalid] = useState<string | null>(null);
  const adjust = useMutation({
    mutationFn: (body: { amount: string; note: string }) => {
      const request = { ...(account.type === 'user' ? { userId: account.id } : { orgId: account.id }), ...body };
      const text = JSON.stringify(request);
      if (attempt.current?.body !== text) attempt.current = { body: text, key: randomKey() };
      return api<{ balance: string }>('POST', '/admin/v1/balance', request, { headers: { 'idempotency-key': attempt.current.key } });
    },
    onSuccess: () => {
      attempt.current = null;
      return client.invalidateQueries({ queryKey: ['admin'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const direction = (event.nativeEvent as SubmitEvent).submitter?.getAttribute('value') === 'debit' ? 'debit' : 'credit';
    const amount = String(form.get('amount') ?? '').trim();
    const note = String(form.get('note') ?? '').trim();
    if (!AMOUNT.test(amount) || !/[1-9]/.test(amount)) return setInvalid('Enter an amount above zero, such as 10.00 (no sign: choose Credit or Debit).');
    if (!note) return setInvalid('Write a note: it is kept in the ledger and the audit log.');
    setInvalid(null);
    adjust.mutate({ amount: direction === 'debit' ? `-${amount}` : amount, note });
  };
  const done = adjust.data && adjust.variables;
  return (
    <section aria-labelledby="adjust-balance">
      <h2 id="adjust-balance">Credit or debit</h2>
      <form onSubmit={submit} className="row" noValidate>
        <LabelledInput label="Amount" name="amount" inputMode="decimal" autoComplete="off" required placeholder="10.00" />
        <LabelledInput label="Note" name="note" autoComplete="off" required maxLength={500} hint="Kept in the ledger and the audit log." />
        <div className="actions">
          <button type="submit" name="direction" value="credit" disabled={adjust.isPending}>
            Credit
          </button>
          <button type="submit" name="direction" value="debit" className="danger" disabled={adjust.isPending}>
            Debit
          </button>
        </div>
      </form>
      {invalid ? (
        <p role="alert" className="error">
          {invalid}
        </p>
      ) : null}
      <ErrorNote error={adjust.error} what="The balance change was not confirmed" />
      {adjust.error instanceof ApiError && (adjust.error.status === 0 || adjust.error.status >= 500) ? (
        <p className="muted">Sending the same amount and note again is safe: the gateway books it once.</p>
      ) : null}
      {done ? (
        <p role="status">
          {done.amount.startsWith('-') ? `Debited ${done.amount.slice(1)}` : `Credited ${done.amount}`} ({done.note}). The balance is now {adjust.data.balance}.
        </p>
      ) : null}
    </section>
  );
}
