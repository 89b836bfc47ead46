import { Link } from '@tanstack/react-router';
import type { AdminUser } from '../../../api/types.ts';
import { SearchList } from '../../../components/admin/search-list.tsx';

/** /console/admin/users: every user, newest first, found by name, email or id; each opens its detail page. */
export function AdminUsersPage() {
  return (
    <SearchList<AdminUser>
      heading="Users"
      path="/admin/v1/users"
      queryKey={['admin', 'users']}
      searchLabel="Find users"
      fieldLabel="Name, email or id"
      what="users"
      caption={(query) => (query ? `Users matching “${query}”` : 'Users, newest first')}
      empty={(query) => (query ? 'No user matches.' : 'No users yet: create one with `tollgate users create` or POST /admin/v1/users.')}
      columns={[
        { header: 'Name', cell: (user) => <Link to="/console/admin/users/$id" params={{ id: user.id }}>{user.name}</Link>, rowHeader: true },
        { header: 'Email', cell: (user) => user.email ?? '—' },
        { header: 'Balance', cell: (user) => user.balance, numeric: true },
        { header: 'Operator', cell: (user) => (user.operator ? 'yes' : 'no') },
        { header: 'Id', cell: (user) => <span className="mono">{user.id}</span> },
      ]}
    />
  );
}
