import { Link, useParams } from '@tanstack/react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiError, api } from '../api/client.ts';
import { ErrorNote, Loading } from '../components/status.tsx';

const MIN_PASSWORD_LENGTH = 8;

/** A link that is used, expired or never existed: said plainly, with the way to get a new one. */
function LinkGone() {
  return (
    <>
      <p role="alert" className="error">
        This link has been used or has expired. Reset links work once and for one hour.
      </p>
      <p>
        Ask for a new link (or ask the operator of this gateway), then open the newest one. <Link to="/login">Sign in</Link>
      </p>
    </>
  );
}

const isInvalidToken = (error: unknown): boolean => error instanceof ApiError && error.status === 400;

/** /reset/:token — checks the link first (GET does not use it), then sets a new password; every session of the user ends. */
export function ResetPage() {
  const { token } = useParams({ from: '/reset/$token' });
  const client = useQueryClient();
  const check = useQuery({
    queryKey: ['password-reset', token],
    queryFn: () => api<{ valid: boolean; expiresAt: string }>('GET', `/api/v1/auth/password-reset/${encodeURIComponent(token)}`),
    retry: false,
  });
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get('password') ?? '');
    if (password !== String(form.get('repeat') ?? '')) {
      setError(new Error('the two passwords differ'));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/api/v1/auth/password-reset/confirm', { token, password });
      client.removeQueries({ queryKey: ['session'] });
      setDone(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="narrow">
      <h1>Set a new password</h1>
      {check.isPending ? (
        <Loading what="the reset link" />
      ) : done ? (
        <>
          <p role="status">Your password is set. Sessions signed in with the old one have ended.</p>
          <p>
            <Link to="/login">Sign in</Link>
          </p>
        </>
      ) : check.isError ? (
        isInvalidToken(check.error) ? <LinkGone /> : <ErrorNote error={check.error} what="Checking the link failed" />
      ) : isInvalidToken(error) ? (
        <LinkGone />
      ) : (
        <form onSubmit={(event) => void submit(event)}>
          <p className="muted">This link works once, until {new Date(check.data.expiresAt).toLocaleString()}.</p>
          <label>
            New password
            <input name="password" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={512} required />
          </label>
          <label>
            Repeat the new password
            <input name="repeat" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={512} required />
          </label>
          <ErrorNote error={error} what="Setting the password failed" />
          <button type="submit" disabled={busy}>
            Set password
          </button>
        </form>
      )}
    </main>
  );
}
