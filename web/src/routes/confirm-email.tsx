import { Link, useParams } from '@tanstack/react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api } from '../api/client.ts';
import { ErrorNote } from '../components/status.tsx';

/**
 * /confirm-email/:token — the link mailed to a new address. Confirming changes the email, so it takes a click (mail scanners
 * that open links do not change anyone's address).
 */
export function ConfirmEmailPage() {
  const { token } = useParams({ from: '/confirm-email/$token' });
  const client = useQueryClient();
  const confirm = useMutation({
    mutationFn: () => api<{ ok: true; email: string }>('POST', '/api/v1/auth/email-change/confirm', { token }),
    onSuccess: () => void client.invalidateQueries(),
  });
  const gone = confirm.error instanceof ApiError && confirm.error.status === 400;
  return (
    <main id="main" className="narrow">
      <h1>Confirm your new email</h1>
      {confirm.isSuccess ? (
        <>
          <p role="status">Your email is now {confirm.data.email}. Sign in with it from now on.</p>
          <p>
            <Link to="/console">Console</Link> · <Link to="/login">Sign in</Link>
          </p>
        </>
      ) : gone ? (
        <p role="alert" className="error">
          This link has been used or has expired. Confirmation links work once and for 24 hours; change the email again under your profile to get a new one.
        </p>
      ) : (
        <>
          <p>Confirm to sign in with the new address from now on. The old address is told of the change.</p>
          <ErrorNote error={confirm.error} what="Confirming failed" />
          <button type="button" disabled={confirm.isPending} onClick={() => confirm.mutate()}>
            Confirm email
          </button>
        </>
      )}
    </main>
  );
}
