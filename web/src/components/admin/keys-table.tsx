import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { api } from '../../api/client.ts';
import { usePagedList, type ListParams } from '../../api/paged-list.ts';
import type { AdminKey } from '../../api/types.ts';
import { shortTime } from '../../lib/dates.ts';
import { ConfirmButton } from '../confirm-button.tsx';
import { DataTable } from '../data-table.tsx';
import { ErrorNote } from '../status.tsx';

/** Where a key stands, in the words of the table. */
export function keyState(key: AdminKey, now = Date.now()): 'revoked' | 'disabled' | 'expired' | 'active' {
  if (key.revokedAt) return 'revoked';
  if (key.disabled) return 'disabled';
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return 'expired';
  return 'active';
}

/** Keys of every account (GET /admin/v1/keys with `params` as filters), 50 a page: disable, enable, revoke after confirming. */
export function AdminKeysTable({ params, caption }: { params: ListParams; caption: string }) {
  const { rows, pages } = usePagedList<AdminKey>(['admin', 'keys'], '/admin/v1/keys', { limit: 50, ...params });
  return (
    <DataTable
      caption={caption}
      what="keys"
      empty="No keys match."
      rows={rows}
      rowKey={(key) => key.id}
      state={pages}
      more={pages}
      moreLabel="Load more keys"
      columns={[
        { header: 'Name', cell: (key) => key.name ?? '(no name)', rowHeader: true },
        { header: 'Key id', cell: (key) => <span className="mono">{key.id}</span> },
        { header: 'Starts', cell: (key) => <span className="mono">{key.start}</span> },
        { header: 'User', cell: (key) => <Link to="/console/admin/users/$id" params={{ id: key.userId }}>{key.userId}</Link> },
        { header: 'Org', cell: (key) => (key.orgId ? <Link to="/console/admin/orgs/$id" params={{ id: key.orgId }}>{key.orgId}</Link> : '—') },
        { header: 'Scope', cell: (key) => key.scope },
        { header: 'State', cell: (key) => keyState(key) },
        { header: 'Spent', cell: (key) => key.spent, numeric: true },
        { header: 'Last used (UTC)', cell: (key) => shortTime(key.lastUsedAt) },
        { header: 'Actions', cell: (key) => <KeyActions apiKey={key} /> },
      ]}
    />
  );
}

function KeyActions({ apiKey }: { apiKey: AdminKey }) {
  const client = useQueryClient();
  const path = `/admin/v1/keys/${encodeURIComponent(apiKey.id)}`;
  const refresh = () => client.invalidateQueries({ queryKey: ['admin', 'keys'] });
  const toggle = useMutation({ mutationFn: (disabled: boolean) => api<AdminKey>('PATCH', path, { disabled }), onSuccess: refresh });
  const revoke = useMutation({ mutationFn: () => api<{ ok: true }>('DELETE', path), onSuccess: refresh });
  if (apiKey.revokedAt) return <span className="muted">revoked {shortTime(apiKey.revokedAt)}</span>;
  const name = apiKey.name ?? apiKey.id;
  return (
    <>
      <div className="actions">
        <button type="button" onClick={() => toggle.mutate(!apiKey.disabled)} disabled={toggle.isPending} aria-label={`${apiKey.disabled ? 'Enable' : 'Disable'} key ${name}`}>
          {apiKey.disabled ? 'Enable' : 'Disable'}
        </button>
        <ConfirmButton
          label="Revoke"
          title={`Revoke the key “${name}”?`}
          message="It stops working at once, on every node, open streams too. This cannot be undone: its owner makes a new key."
          confirmLabel="Revoke key"
          onConfirm={() => revoke.mutate()}
          disabled={revoke.isPending}
        />
      </div>
      <ErrorNote error={toggle.error} what="Changing the key failed" />
      <ErrorNote error={revoke.error} what="Revoking failed" />
    </>
  );
}
