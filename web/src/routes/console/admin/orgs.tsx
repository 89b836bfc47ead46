import { Link } from '@tanstack/react-router';
import type { AdminOrg } from '../../../api/admin-types.ts';
import { SearchList } from '../../../components/admin/search-list.tsx';

/** /console/admin/orgs: every organization, newest first, found by name or id; each opens its members and balance. */
export function AdminOrgsPage() {
  return (
    <SearchList<AdminOrg>
      heading="Organizations"
      path="/admin/v1/orgs"
      queryKey={['admin', 'orgs']}
      searchLabel="Find organizations"
      fieldLabel="Name or id"
      what="organizations"
      caption={(query) => (query ? `Organizations matching “${query}”` : 'Organizations, newest first')}
      empty={(query) => (query ? 'No organization matches.' : 'No organizations yet.')}
      columns={[
        { header: 'Name', cell: (org) => <Link to="/console/admin/orgs/$id" params={{ id: org.id }}>{org.name}</Link>, rowHeader: true },
        { header: 'Balance', cell: (org) => org.balance, numeric: true },
        { header: 'Prompt caching', cell: (org) => (org.promptCaching ? 'on' : 'off') },
        { header: 'Owner', cell: (org) => <Link to="/console/admin/users/$id" params={{ id: org.ownerId }}>{org.ownerId}</Link> },
        { header: 'Id', cell: (org) => <span className="mono">{org.id}</span> },
      ]}
    />
  );
}
