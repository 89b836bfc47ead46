import { useQuery } from '@tanstack/react-query';
import type { AccountRef, AdminLedgerEntry } from '../../api/admin-types.ts';
import { api, query } from '../../api/client.ts';
import type { List } from '../../api/types.ts';
import { shortTime } from '../../lib/dates.ts';
import { DataTable } from '../data-table.tsx';

const SHOWN = 20;

/** An account's latest ledger entries (GET /admin/v1/ledger answers newest first). */
export function LedgerTable({ account }: { account: AccountRef }) {
  const ledger = useQuery({
    queryKey: ['admin', 'ledger', account],
    queryFn: () => api<List<AdminLedgerEntry>>('GET', `/admin/v1/ledger${query(account.type === 'user' ? { userId: account.id } : { orgId: account.id })}`),
  });
  const rows = ledger.data?.data.slice(0, SHOWN) ?? [];
  const total = ledger.data?.data.length ?? 0;
  return (
    <section aria-labelledby="ledger">
      <h2 id="ledger">Recent ledger</h2>
      <DataTable
        caption={total > SHOWN ? `The ${SHOWN} latest of ${total} entries` : `${total} entries, newest first`}
        what="the ledger"
        empty="No entries yet: charges, credits and vouchers appear here."
        rows={rows}
        rowKey={(entry) => entry.id}
        state={ledger}
        columns={[
          { header: 'Time (UTC)', cell: (entry) => shortTime(entry.createdAt) },
          { header: 'Kind', cell: (entry) => entry.kind },
          { header: 'Amount', cell: (entry) => entry.amount, numeric: true },
          { header: 'Note', cell: (entry) => entry.note ?? '' },
          { header: 'Model', cell: (entry) => entry.model ?? '—' },
          { header: 'Key', cell: (entry) => entry.keyId ?? '—' },
        ]}
      />
    </section>
  );
}
