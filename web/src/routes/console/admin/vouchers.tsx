import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { VOUCHER_STATES, type AdminVoucher, type CreatedVouchers } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import { usePagedList } from '../../../api/paged-list.ts';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CopyButton } from '../../../components/copy-button.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm, formValues } from '../../../components/filter-form.tsx';
import { LabelledInput, LabelledSelect } from '../../../components/labelled-field.tsx';
import { ErrorNote } from '../../../components/status.tsx';
import { shortTime } from '../../../lib/dates.ts';

const MAX_CODES = 1000;

/** /console/admin/vouchers: make codes (shown once), list vouchers with their redemption state, void an unused one. */
export function AdminVouchersPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<CreatedVouchers | null>(null);
  const { rows, pages } = usePagedList<AdminVoucher>(['admin', 'vouchers'], '/admin/v1/vouchers', { limit: 50, ...filters });
  return (
    <>
      <h1>Vouchers</h1>
      {created ? <NewCodes created={created} onDone={() => setCreated(null)} /> : <CreateVouchers onCreated={setCreated} />}
      <section aria-labelledby="voucher-list">
        <h2 id="voucher-list">Vouchers</h2>
        <FilterForm label="Find vouchers" onApply={setFilters}>
          <LabelledInput label="Note or start of the code" name="query" type="search" />
          <LabelledSelect label="State" name="state" defaultValue="" choices={[{ value: '', label: 'Any' }, ...VOUCHER_STATES.map((state) => ({ value: state, label: state }))]} />
        </FilterForm>
        <DataTable
          caption="Vouchers, newest first (codes are never shown again; only their start)"
          what="vouchers"
          empty="No vouchers match."
          rows={rows}
          rowKey={(voucher) => voucher.id}
          state={pages}
          more={pages}
          columns={[
            { header: 'Code starts', cell: (voucher) => <span className="mono">{voucher.codeStart}…</span>, rowHeader: true },
            { header: 'Amount', cell: (voucher) => voucher.amount, numeric: true },
            { header: 'State', cell: (voucher) => voucher.state },
            { header: 'Note', cell: (voucher) => voucher.note ?? '' },
            { header: 'Created (UTC)', cell: (voucher) => shortTime(voucher.createdAt) },
            { header: 'Expires (UTC)', cell: (voucher) => shortTime(voucher.expiresAt) },
            { header: 'Redeemed', cell: (voucher) => <Redemption voucher={voucher} /> },
            { header: 'Actions', cell: (voucher) => (voucher.state === 'active' ? <VoidVoucher voucher={voucher} /> : null) },
          ]}
        />
      </section>
    </>
  );
}

function Redemption({ voucher }: { voucher: AdminVoucher }) {
  if (!voucher.redeemedAt) return <>—</>;
  const account = voucher.account;
  return (
    <>
      {shortTime(voucher.redeemedAt)} by{' '}
      {voucher.redeemedBy ? <Link to="/console/admin/users/$id" params={{ id: voucher.redeemedBy }}>{voucher.redeemedBy}</Link> : 'someone'}
      {account?.type === 'org' ? (
        <>
          {' '}
          for <Link to="/console/admin/orgs/$id" params={{ id: account.id }}>{account.id}</Link>
        </>
      ) : null}
    </>
  );
}

function CreateVouchers({ onCreated }: { onCreated: (created: CreatedVouchers) => void }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (body: { amount: string; count: number; expiresAt?: string; note?: string }) => api<CreatedVouchers>('POST', '/admin/v1/vouchers', body),
    onSuccess: (created) => {
      onCreated(created);
      return client.invalidateQueries({ queryKey: ['admin', 'vouchers'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const values = formValues(event.currentTarget);
    create.mutate({
      amount: values.amount ?? '',
      count: Number(values.count ?? '1'),
      ...(values.expires ? { expiresAt: `${values.expires}T00:00:00.000Z` } : {}),
      ...(values.note ? { note: values.note } : {}),
    });
  };
  return (
    <section aria-labelledby="create-vouchers">
      <h2 id="create-vouchers">Create vouchers</h2>
      <form onSubmit={submit} className="row">
        <LabelledInput label="Amount per code" name="amount" inputMode="decimal" autoComplete="off" required pattern="\d+(\.\d+)?" placeholder="25.00" />
        <LabelledInput label="Number of codes" name="count" type="number" min={1} max={MAX_CODES} defaultValue={1} required />
        <LabelledInput label="Expires on (UTC, start of the day)" name="expires" type="date" hint="Leave empty: never expires." />
        <LabelledInput label="Note" name="note" maxLength={500} autoComplete="off" />
        <button type="submit" disabled={create.isPending}>
          Create codes
        </button>
      </form>
      <ErrorNote error={create.error} what="Creating vouchers failed" />
    </section>
  );
}

/** The new codes, shown this once: the gateway keeps only their hashes. */
function NewCodes({ created, onDone }: { created: CreatedVouchers; onDone: () => void }) {
  const first = created.data[0];
  return (
    <section aria-labelledby="new-codes" className="notice">
      <h2 id="new-codes">
        {created.codes.length === 1 ? 'New voucher code' : `${created.codes.length} new voucher codes`}
        {first ? ` worth ${first.amount} each` : ''}
      </h2>
      <p>Copy them now: they are shown only this once.</p>
      <ul aria-label="New voucher codes" className="codes">
        {created.codes.map((code) => (
          <li key={code} className="mono">
            {code}
          </li>
        ))}
      </ul>
      <div className="actions">
        <CopyButton text={created.codes.join('\n')} label="Copy codes" />
        <button type="button" onClick={onDone}>
          I have copied them
        </button>
      </div>
    </section>
  );
}

function VoidVoucher({ voucher }: { voucher: AdminVoucher }) {
  const client = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => api<AdminVoucher>('DELETE', `/admin/v1/vouchers/${encodeURIComponent(voucher.id)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['admin', 'vouchers'] }),
  });
  return (
    <>
      <ConfirmButton
        label="Void"
        title={`Void the voucher ${voucher.codeStart}…?`}
        message={`Its code will no longer pay ${voucher.amount}. This cannot be undone.`}
        confirmLabel="Void voucher"
        onConfirm={() => revoke.mutate()}
        disabled={revoke.isPending}
      />
      <ErrorNote error={revoke.error} what="Voiding failed" />
    </>
  );
}
