import { useState } from 'react';
import { usePagedList } from '../../api/paged-list.ts';
import type { RequestRow } from '../../api/types.ts';
import { Facts, type Fact } from '../../components/facts.tsx';
import { FilterForm } from '../../components/filter-form.tsx';
import { LabelledInput } from '../../components/labelled-field.tsx';
import { RequestsTable } from '../../components/requests-table.tsx';

/** /console/requests: the request log, newest first, with filters, pages by cursor and a detail view. */
export function RequestsPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const [selected, setSelected] = useState<RequestRow | null>(null);
  const { rows, pages } = usePagedList<RequestRow>(['requests'], '/api/v1/requests', { limit: 50, ...filters });
  return (
    <>
      <h1>Requests</h1>
      <FilterForm
        label="Request filters"
        onApply={(values) => {
          setFilters(values);
          setSelected(null);
        }}
      >
        <LabelledInput label="Model" name="model" />
        <LabelledInput label="Status" name="status" inputMode="numeric" pattern="\d{3}" />
        <LabelledInput label="Key id" name="keyId" />
        <LabelledInput label="From (UTC)" name="from" type="date" />
        <LabelledInput label="To (UTC)" name="to" type="date" />
      </FilterForm>
      {selected ? <RequestDetails row={selected} onClose={() => setSelected(null)} /> : null}
      <RequestsTable
        rows={rows}
        caption={`${rows.length} requests, newest first`}
        onDetails={setSelected}
        state={pages}
        more={pages}
        empty="No requests match. Calls made with your keys appear here within a second."
      />
    </>
  );
}

function RequestDetails({ row, onClose }: { row: RequestRow; onClose: () => void }) {
  const fields: Fact[] = Object.entries(row).map(([name, value]) => [name, value === null ? '—' : String(value)]);
  return (
    <section aria-labelledby="request-details" className="notice">
      <h2 id="request-details">Request {row.id}</h2>
      <Facts facts={fields} />
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </section>
  );
}
