import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useParams } from '@tanstack/react-router';
import type { ResetLink } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import type { AdminUser } from '../../../api/types.ts';
import { BalanceForm } from '../../../components/admin/balance-form.tsx';
import { AdminKeysTable } from '../../../components/admin/keys-table.tsx';
import { LedgerTable } from '../../../components/admin/ledger-table.tsx';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { CopyButton } from '../../../components/copy-button.tsx';
import { ErrorNote, Loading } from '../../../components/status.tsx';
import { shortTime } from '../../../lib/dates.ts';

/** /console/admin/users/:id: a user's balance (credit, debit), operator rights, a password-reset link, keys and recent ledger. */
export function AdminUserPage() {
  const { id } = useParams({ from: '/console/admin/users/$id' });
  const user = useQuery({ queryKey: ['admin', 'user', id], queryFn: () => api<AdminUser>('GET', `/admin/v1/users/${encodeURIComponent(id)}`) });
  const account = { type: 'user' as const, id };
  return (
    <>
      <p>
        <Link to="/console/admin/users">All users</Link>
      </p>
      <h1>{user.data ? user.data.name : 'User'}</h1>
      {user.isPending ? <Loading what="the user" /> : null}
      <ErrorNote error={user.error} what="Loading the user" />
      {user.data ? (
        <>
          <dl className="figures">
            <div>
              <dt>Balance</dt>
              <dd>{user.data.balance}</dd>
            </div>
            <div>
              <dt>Email</dt>
              <dd className="small">{user.data.email ?? '—'}</dd>
            </div>
            <div>
              <dt>Operator</dt>
              <dd className="small">{user.data.operator ? 'yes' : 'no'}</dd>
            </div>
            <div>
              <dt>Id</dt>
              <dd className="small mono">{user.data.id}</dd>
            </div>
          </dl>
          <BalanceForm account={account} />
          <Access user={user.data} />
        </>
      ) : null}
      <section aria-labelledby="user-keys">
        <h2 id="user-keys">Keys</h2>
        <AdminKeysTable params={{ userId: id, revoked: 'true' }} caption="The user's keys, newest first (revoked ones too)" />
      </section>
      <LedgerTable account={account} />
    </>
  );
}

/** Operator rights and a password-reset link the operator hands over (no mail needed). */
function Access({ user }: { user: AdminUser }) {
  const client = useQueryClient();
  const path = `/admin/v1/users/${encodeURIComponent(user.id)}`;
  const operator = useMutation({
    mutationFn: (value: boolean) => api<AdminUser>('PATCH', path, { operator: value }),
    onSuccess: (updated) => {
      client.setQueryData(['admin', 'user', user.id], updated);
      return client.invalidateQueries({ queryKey: ['admin', 'users'] });
    },
  });
  const reset = useMutation({ mutationFn: () => api<ResetLink>('POST', `${path}/password-reset`) });
  return (
    <section aria-labelledby="access">
      <h2 id="access">Access</h2>
      <div className="actions">
        {user.operator ? (
          <ConfirmButton
            label="Remove operator rights"
            title={`Remove ${user.name}'s operator rights?`}
            message="They keep their account and keys, but the operator pages and the admin API refuse them from their next request."
            confirmLabel="Remove rights"
            onConfirm={() => operator.mutate(false)}
            disabled={operator.isPending}
          />
        ) : (
          <ConfirmButton
            label="Make operator"
            title={`Make ${user.name} an operator?`}
            message="Operators see and change every account, key, price and voucher of this gateway, with their own session."
            confirmLabel="Make operator"
            onConfirm={() => operator.mutate(true)}
            disabled={operator.isPending}
          />
        )}
        <button type="button" onClick={() => reset.mutate()} disabled={reset.isPending || !user.email}>
          Issue a password-reset link
        </button>
      </div>
      {!user.email ? <p className="muted">A password-reset link needs an email address on the account.</p> : null}
      <ErrorNote error={operator.error} what="Changing operator rights failed" />
      <ErrorNote error={reset.error} what="Issuing a reset link failed" />
      {reset.data ? (
        <div className="notice">
          <label>
            Password-reset link (valid until {shortTime(reset.data.expiresAt)} UTC; give it to {user.name} only)
            <input readOnly value={reset.data.url} className="mono" onFocus={(event) => event.currentTarget.select()} />
          </label>
          <CopyButton text={reset.data.url} label="Copy link" />
        </div>
      ) : null}
    </section>
  );
}
