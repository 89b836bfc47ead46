import { useInfiniteQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import type { List, RequestRow } from '../../api/types.ts';
import { RequestsTable } from '../../components/requests-table.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';

interface Filters {
  model?: string;
  status?: string;
  keyId?: string;
  from?: string;
  to?: string;
}

/** /console/requests: the request log, newest first, with filters, pages by cursor and a detail view. */
export function RequestsPage() {
  const [filters, setFilters] = useState<Filters>({});
  const [selected, setSelected] = useState<RequestRow | null>(null);
  const pages = useInfiniteQuery({
    queryKey: ['requests', filters],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api<List<RequestRow>>('GET', `/api/v1/requests${query({ limit: 50, cursor: pageParam, ...filters })}`),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const value = (name: string) => String(form.get(name) ?? '').trim() || undefined;
    setFilters({ model: value('model'), status: value('status'), keyId: value('keyId'), from: value('from'), to: value('to') });
    setSelected(null);
  };
  const rows = pages.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <>
      <h1>Requests</h1>
      <form onSubmit={submit} className="row filters" aria-label="Request filters">
        <label>
          Model
          <input name="model" />
        </label>
        <label>
          Status
          <input name="status" inputMode="numeric" pattern="\d{3}" />
        </label>
        <label>
          Key id
          <input name="keyId" />
        </label>
        <label>
          From (UTC)
          <input name="from" type="date" />
        </label>
        <label>
          To (UTC)
          <input name="to" type="date" />
        </label>
        <button type="submit">Filter</button>
      </form>
      {selected ? <RequestDetails row={selected} onClose={() => setSelected(null)} /> : null}
      {pages.isPending ? <Loading what="requests" /> : null}
      <ErrorNote error={pages.error} what="Loading requests" />
      {pages.data && rows.length === 0 ? <p className="empty">No requests match. Calls made with your keys appear here within a second.</p> : null}
      {rows.length > 0 ? <RequestsTable rows={rows} caption={`${rows.length} requests, newest first`} onDetails={setSelected} /> : null}
      {pages.hasNextPage ? (
        <button type="button" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
          Load more
        </button>
      ) : null}
    </>
  );
}

function RequestDetails({ row, onClose }: { row: RequestRow; onClose: () => void }) {
  const fields: [string, string][] = Object.entries(row).map(([name, value]) => [name, value === null ? '—' : String(value)]);
  return (
    <section aria-labelledby="request-details" className="notice">
      <h2 id="request-details">Request {row.id}</h2>
      <dl className="details">
        {fields.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </section>
  );
}
