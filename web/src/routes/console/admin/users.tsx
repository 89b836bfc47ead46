import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { usePagedList } from '../../../api/paged-list.ts';
import type { AdminUser } from '../../../api/types.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { LabelledInput } from '../../../components/labelled-field.tsx';

/** /console/admin/users: every user, newest first, found by name, email or id; each opens its detail page. */
export function AdminUsersPage() {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, pages } = usePagedList<AdminUser>(['admin', 'users'], '/admin/v1/users', { limit: 50, ...filters });
  return (
    <>
      <h1>Users</h1>
      <FilterForm label="Find users" onApply={setFilters} submitLabel="Search">
        <LabelledInput label="Name, email or id" name="query" type="search" />
      </FilterForm>
      <DataTable
        caption={filters.query ? `Users matching “${filters.query}”` : 'Users, newest first'}
        what="users"
        empty={filters.query ? 'No user matches.' : 'No users yet: create one with `tollgate users create` or POST /admin/v1/users.'}
        rows={rows}
        rowKey={(user) => user.id}
        state={pages}
        more={pages}
        columns={[
          { header: 'Name', cell: (user) => <Link to="/console/admin/users/$id" params={{ id: user.id }}>{user.name}</Link>, rowHeader: true },
          { header: 'Email', cell: (user) => user.email ?? '—' },
          { header: 'Balance', cell: (user) => user.balance, numeric: true },
          { header: 'Operator', cell: (user) => (user.operator ? 'yes' : 'no') },
          { header: 'Id', cell: (user) => <span className="mono">{user.id}</span> },
        ]}
      />
    </>
  );
}
