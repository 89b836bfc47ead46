import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import { type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { CreatedInvitation, Invitation, List, Org, OrgMember, OrgRole } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

export const useOrg = (id: string) => useQuery({ queryKey: ['org', id], queryFn: () => api<Org>('GET', `/api/v1/orgs/${encodeURIComponent(id)}`) });

/** The org pages' heading and tabs (Members, API). */
export function OrgTabs({ org, id }: { org: Org | undefined; id: string }) {
  return (
    <>
      <h1>{org?.name ?? 'Organisation'}</h1>
      <nav aria-label="Organisation">
        <ul className="tabs">
          <li>
            <Link to="/console/orgs/$id" params={{ id }} activeOptions={{ exact: true }} activeProps={{ 'aria-current': 'page' }}>
              Members
            </Link>
          </li>
          <li>
            <Link to="/console/orgs/$id/api" params={{ id }} activeProps={{ 'aria-current': 'page' }}>
              API
            </Link>
          </li>
        </ul>
      </nav>
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
            <div className="table-scroll">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Email</th>
                    <th scope="col">Role</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {org.data.members.map((member) => (
                    <MemberRow key={member.id} orgId={id} member={member} manages={manages} />
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          {manages ? <Invitations orgId={id} /> : null}
        </>
      ) : null}
    </>
  );
}

function MemberRow({ orgId, member, manages }: { orgId: string; member: OrgMember; manages: boolean }) {
  const client = useQueryClient();
  const path = `/api/v1/orgs/${encodeURIComponent(orgId)}/members/${encodeURIComponent(member.id)}`;
  const refresh = () => Promise.all([client.invalidateQueries({ queryKey: ['org', orgId] }), client.invalidateQueries({ queryKey: ['me'] })]);
  const role = useMutation({ mutationFn: (next: OrgRole) => api('PATCH', path, { role: next }), onSuccess: refresh });
  const remove = useMutation({ mutationFn: () => api('DELETE', path), onSuccess: refresh });
  const who = member.email ?? member.name;
  return (
    <tr>
      <th scope="row">{member.name}</th>
      <td>{member.email ?? '—'}</td>
      <td>
        <label className="sr-only" htmlFor={`role-${member.id}`}>
          Role of {who}
        </label>
        <select id={`role-${member.id}`} value={member.role} disabled={!manages || role.isPending} onChange={(event) => role.mutate(event.target.value as OrgRole)}>
          <option value="owner">owner</option>
          <option value="admin">admin</option>
          <option value="member">member</option>
        </select>
        <ErrorNote error={role.error} what="Changing the role failed" />
      </td>
      <td>
        <ConfirmButton
          label={`Remove ${who}`}
          title={`Remove ${who} from the organisation?`}
          message="Their keys and bots for this organisation stop working at once."
          confirmLabel="Remove member"
          disabled={!manages}
          onConfirm={() => remove.mutate()}
        />
        <ErrorNote error={remove.error} what="Removing failed" />
      </td>
    </tr>
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
        <label>
          Email to invite
          <input name="email" type="email" required />
        </label>
        <label>
          Invited role
          <select name="role" defaultValue="member">
            <option value="member">member</option>
            <option value="admin">admin</option>
            <option value="owner">owner</option>
          </select>
        </label>
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
      <ErrorNote error={list.error} what="Loading invitations" />
      <ErrorNote error={revoke.error} what="Revoking the invitation failed" />
      {list.data && list.data.data.length > 0 ? (
        <div className="table-scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Expires</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((invitation) => (
                <tr key={invitation.id}>
                  <th scope="row">{invitation.email}</th>
                  <td>{invitation.role}</td>
                  <td>{invitation.status}</td>
                  <td>{shortTime(invitation.expiresAt)}</td>
                  <td>
                    {invitation.status === 'pending' ? (
                      <ConfirmButton label={`Revoke invitation of ${invitation.email}`} title="Revoke this invitation?" message="Its link stops working." confirmLabel="Revoke invitation" onConfirm={() => revoke.mutate(invitation.id)} />
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
