import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { CreatedInvitation, Invitation, List, Org, OrgMember } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { LabelledInput, LabelledSelect } from '../../components/labelled-field.tsx';
import { MemberRoleSelect, RemoveMemberButton, ROLES } from '../../components/member-controls.tsx';
import { NavLinks } from '../../components/nav-links.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';


export const useOrg = (id: string) => useQuery({ queryKey: ['org', id], queryFn: () => api<Org>('GET', `/api/v1/orgs/${encodeURIComponent(id)}`) });

/** The org pages' heading and tabs (Members, API). */
export function OrgTabs({ org, id }: { org: Org | undefined; id: string }) {
  return (
    <>
      <h1>{org?.name ?? 'Organisation'}</h1>
      <NavLinks
        label="Organisation"
        listClassName="tabs"
        links={[
          { to: '/console/orgs/$id', params: { id }, label: 'Members', exact: true },
          { to: '/console/orgs/$id/api', params: { id }, label: 'API' },
        ]}
      />
    </>
  );
}

/** /console/orgs/:id: members and their roles, invitations. Owners and admins change them; the API enforces who may. */
export function OrgPage() {
  const { id } = useParams({ from: '/console/orgs/$id' });
  const org = useOrg(id);
  const manages = org.data !== undefined && org.data.role !== 'member';
  return (
    <>
      <OrgTabs org={org.data} id={id} />
      {org.isPending ? <Loading what="the organisation" /> : null}
      <ErrorNote error={org.error} what="Loading the organisation" />
      {org.data ? (
        <>
          <p>
            Balance {org.data.balance}. Your role: {org.data.role}.
          </p>
          <section aria-labelledby="members">
            <h2 id="members">Members</h2>
            <DataTable
              caption={org.data.members.length === 1 ? '1 member' : `${org.data.members.length} members`}
              what="members"
              empty="No members."
              rows={org.data.members}
              rowKey={(member) => member.id}
              columns={[
                { header: 'Name', cell: (member) => member.name, rowHeader: true },
                { header: 'Email', cell: (member) => member.email ?? '—' },
                { header: 'Role', cell: (member) => <MemberRoleSelect {...memberControls(id, member, manages)} /> },
                { header: 'Actions', cell: (member) => <RemoveMemberButton {...memberControls(id, member, manages)} /> },
              ]}
            />
          </section>
          {manages ? <Invitations orgId={id} /> : null}
        </>
      ) : null}
    </>
  );
}

/** A member's controls on this page: its resource in the org's own API; the org and the user's own account list (their role, their orgs) are read again after a change. */
const memberControls = (orgId: string, member: OrgMember, manages: boolean) => ({
  member,
  path: `/api/v1/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(member.id)}`,
  refresh: [['org', orgId], ['me']],
  manages,
});

function Invitations({ orgId }: { orgId: string }) {
  const client = useQueryClient();
  const path = `/api/v1/orgs/${encodeURIComponent(orgId)}/invitations`;
  const list = useQuery({ queryKey: ['invitations', orgId], queryFn: () => api<List<Invitation>>('GET', `${path}?limit=100`) });
  const invite = useMutation({ mutationFn: (body: unknown) => api<CreatedInvitation>('POST', path, body), onSuccess: () => client.invalidateQueries({ queryKey: ['invitations', orgId] }) });
  const revoke = useMutation({ mutationFn: (id: string) => api('DELETE', `${path}/${id}`), onSuccess: () => client.invalidateQueries({ queryKey: ['invitations', orgId] }) });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    invite.mutate({ email: String(form.get('email') ?? '').trim(), role: form.get('role') });
  };
  return (
    <section aria-labelledby="invitations">
      <h2 id="invitations">Invitations</h2>
      <form onSubmit={submit} className="row">
        <LabelledInput label="Email to invite" name="email" type="email" required />
        <LabelledSelect label="Invited role" name="role" defaultValue="member" choices={[...ROLES].reverse().map((value) => ({ value, label: value }))} />
        <button type="submit" disabled={invite.isPending}>
          Invite
        </button>
      </form>
      <ErrorNote error={invite.error} what="Inviting failed" />
      {invite.data ? (
        <div role="status" className="notice">
          <p>Send this link to {invite.data.email}; it is shown only now:</p>
          <p className="mono">{invite.data.url}</p>
          <CopyButton text={invite.data.url} label="Copy invitation link" />
        </div>
      ) : null}
      <ErrorNote error={revoke.error} what="Revoking the invitation failed" />
      <DataTable
        caption="Invitations, with their links' state"
        what="invitations"
        empty="No invitations yet."
        rows={list.data?.data ?? []}
        rowKey={(invitation) => invitation.id}
        state={list}
        columns={[
          { header: 'Email', cell: (invitation) => invitation.email, rowHeader: true },
          { header: 'Role', cell: (invitation) => invitation.role },
          { header: 'Status', cell: (invitation) => invitation.status },
          { header: 'Expires', cell: (invitation) => shortTime(invitation.expiresAt) },
          {
            header: 'Actions',
            cell: (invitation) =>
              invitation.status === 'pending' ? (
                <ConfirmButton label={`Revoke invitation of ${invitation.email}`} title="Revoke this invitation?" message="Its link stops working." confirmLabel="Revoke invitation" onConfirm={() => revoke.mutate(invitation.id)} />
              ) : null,
          },
        ]}
      />
    </section>
  );
}
