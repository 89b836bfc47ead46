import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { CreatedInvitation, Invitation, List, Org, OrgMember, OrgRole } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { LabelledInput, LabelledSelect } from '../../components/labelled-field.tsx';
import { NavLinks } from '../../components/nav-links.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

/** The roles, from the most rights to the fewest. */
const ROLES: readonly OrgRole[] = ['owner', 'admin', 'member'];

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
                { header: 'Role', cell: (member) => <RoleSelect orgId={id} member={member} manages={manages} /> },
                { header: 'Actions', cell: (member) => <RemoveMember orgId={id} member={member} manages={manages} /> },
              ]}
            />
          </section>
          {manages ? <Invitations orgId={id} /> : null}
        </>
      ) : null}
    </>
  );
}

const memberPath = (orgId: string, member: OrgMember) => `/api/v1/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(member.id)}`;

/** After a member changes, the org and the user's own account list (their role, their orgs) are read again. */
function useMemberChange<T>(orgId: string, change: (input: T) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['org', orgId] }), client.invalidateQueries({ queryKey: ['me'] })]) });
}

interface MemberProps {
  orgId: string;
  member: OrgMember;
  manages: boolean;
}

function RoleSelect({ orgId, member, manages }: MemberProps) {
  const role = useMemberChange(orgId, (next: OrgRole) => api('PATCH', memberPath(orgId, member), { role: next }));
  return (
    <>
      <label className="sr-only" htmlFor={`role-${member.id}`}>
        Role of {member.email ?? member.name}
      </label>
      <select id={`role-${member.id}`} value={member.role} disabled={!manages || role.isPending} onChange={(event) => role.mutate(event.target.value as OrgRole)}>
        {ROLES.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
      </select>
      <ErrorNote error={role.error} what="Changing the role failed" />
    </>
  );
}

function RemoveMember({ orgId, member, manages }: MemberProps) {
  const remove = useMemberChange(orgId, () => api('DELETE', memberPath(orgId, member)));
  const who = member.email ?? member.name;
  return (
    <>
      <ConfirmButton
        label={`Remove ${who}`}
        title={`Remove ${who} from the organisation?`}
        message="Their keys and bots for this organisation stop working at once."
        confirmLabel="Remove member"
        disabled={!manages}
        onConfirm={() => remove.mutate(undefined)}
      />
      <ErrorNote error={remove.error} what="Removing failed" />
    </>
  );
}

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
