import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import type { AdminOrg } from '../../../api/admin-types.ts';
import { usePagedList } from '../../../api/paged-list.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { LabelledInput } from '../../../components/labelled-field.tsx';

/** /console/admin/orgs: every organization, newest first, found by name or id; each opens its members and balance. */
export function AdminOrgsPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, pages } = usePagedList<AdminOrg>(['admin', 'orgs'], '/admin/v1/orgs', { limit: 50, ...filters });
  return (
    <>
      <h1>Organizations</h1>
      <FilterForm label="Find organizations" onApply={setFilters} submitLabel="Search">
        <LabelledInput label="Name or id" name="query" type="search" />
      </FilterForm>
      <DataTable
        caption={filters.query ? `Organizations matching “${filters.query}”` : 'Organizations, newest first'}
        what="organizations"
        empty={filters.query ? 'No organization matches.' : 'No organizations yet.'}
        rows={rows}
        rowKey={(org) => org.id}
        state={pages}
        more={pages}
        columns={[
          { header: 'Name', cell: (org) => <Link to="/console/admin/orgs/$id" params={{ id: org.id }}>{org.name}</Link>, rowHeader: true },
          { header: 'Balance', cell: (org) => org.balance, numeric: true },
          { header: 'Prompt caching', cell: (org) => (org.promptCaching ? 'on' : 'off') },
          { header: 'Owner', cell: (org) => <Link to="/console/admin/users/$id" params={{ id: org.ownerId }}>{org.ownerId}</Link> },
          { header: 'Id', cell: (org) => <span className="mono">{org.id}</span> },
        ]}
      />
    </>
  );
}
