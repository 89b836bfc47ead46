import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client.ts';
import { useSignedIn } from '../api/session.ts';
import type { Session } from '../api/types.ts';
import { ErrorNote } from '../components/status.tsx';

/** Only the app's own paths are followed after sign-in (an open redirect would hand the session's trust to anyone). */
export const safeNext = (next: string | undefined): string => (next && next.startsWith('/') && !next.startsWith('//') ? next : '/console');

export function LoginPage() {
  const { next } = useSearch({ from: '/login' });
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      const session = await api<Session>('POST', '/api/v1/auth/login', { email: form.get('email'), password: form.get('password') });
      signedIn(session);
      await navigate({ to: safeNext(next) });
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" className="narrow">
      <h1>Sign in</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label>
          Email
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autoComplete="current-password" required />
        </label>
        <ErrorNote error={error} what="Sign-in failed" />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <ForgotPassword />
      <p>
        No account? <Link to="/signup">Sign up</Link> (when this gateway allows it) or ask its operator. <Link to="/">Models and prices</Link>
      </p>
    </main>
  );
}

/** "Forgot your password?": the API answers the same whether or not the address has an account, and so does the page. */
function ForgotPassword() {
  const [error, setError] = useState<unknown>(null);
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    setSent(false);
    try {
      await api('POST', '/api/v1/auth/password-reset', { email: form.get('email') });
      setSent(true);
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };
  return (
    <details>
      <summary>Forgot your password?</summary>
      <form onSubmit={(event) => void submit(event)}>
        <label>
          Account address for the reset link
          <input name="email" type="email" autoComplete="username" required />
        </label>
        <ErrorNote error={error} what="Asking for a reset link failed" />
        {sent ? <p role="status">If an account has this address, a reset link is on its way. It works once, for one hour.</p> : null}
        <button type="submit" disabled={busy}>
          Send reset link
        </button>
      </form>
    </details>
  );
}
