import { useQuery } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import type { AdminMember, AdminOrgDetail } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import { BalanceForm } from '../../../components/admin/balance-form.tsx';
import { AdminKeysTable } from '../../../components/admin/keys-table.tsx';
import { LedgerTable } from '../../../components/admin/ledger-table.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { MemberRoleSelect, RemoveMemberButton } from '../../../components/member-controls.tsx';
import { ErrorNote, Loading } from '../../../components/status.tsx';

/** A member's controls on the operator's page: the admin API's member resource; the org's page is read again after a change. */
const memberControls = (orgId: string, member: AdminMember) => ({
  member: { id: member.userId, name: member.name, email: member.email, role: member.role },
  path: `/admin/v1/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(member.userId)}`,
  refresh: [['admin', 'org', orgId]],
  manages: true,
});

/** /console/admin/orgs/:id: an organization's balance (credit, debit), members (their roles changed, removed), business keys and recent ledger. */
export function AdminOrgPage() {
  const { id } = useParams({ from: '/console/admin/orgs/$id' });
  const org = useQuery({ queryKey: ['admin', 'org', id], queryFn: () => api<AdminOrgDetail>('GET', `/admin/v1/orgs/${encodeURIComponent(id)}`) });
  const account = { type: 'org' as const, id };
  return (
    <>
      <p>
        <Link to="/console/admin/orgs">All organizations</Link>
      </p>
      <h1>{org.data ? org.data.name : 'Organization'}</h1>
      {org.isPending ? <Loading what="the organization" /> : null}
      <ErrorNote error={org.error} what="Loading the organization" />
      {org.data ? (
        <>
          <dl className="figures">
            <div>
              <dt>Balance</dt>
              <dd>{org.data.balance}</dd>
            </div>
            <div>
              <dt>Prompt caching</dt>
              <dd className="small">{org.data.promptCaching ? 'on' : 'off'}</dd>
            </div>
            <div>
              <dt>Id</dt>
              <dd className="small mono">{org.data.id}</dd>
            </div>
          </dl>
          <section aria-labelledby="members">
            <h2 id="members">Members</h2>
            <DataTable
              caption={`Members: ${org.data.members.length}`}
              what="members"
              empty="No members."
              rows={org.data.members}
              rowKey={(member) => member.userId}
              columns={[
                { header: 'Name', cell: (member) => <Link to="/console/admin/users/$id" params={{ id: member.userId }}>{member.name}</Link>, rowHeader: true },
                { header: 'Email', cell: (member) => member.email ?? '—' },
                { header: 'Role', cell: (member) => <MemberRoleSelect {...memberControls(id, member)} /> },
                { header: 'Actions', cell: (member) => <RemoveMemberButton {...memberControls(id, member)} /> },
              ]}
            />
          </section>
          <BalanceForm account={account} />
        </>
      ) : null}
      <section aria-labelledby="org-keys">
        <h2 id="org-keys">Business keys</h2>
        <AdminKeysTable params={{ orgId: id }} caption="Keys charged to this organization, newest first" />
      </section>
      <LedgerTable account={account} />
    </>
  );
}
