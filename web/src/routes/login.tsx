import { Link, useNavigate, useSearch } from '@tanstack/react-router';
import { useMutation } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import { useSignedIn } from '../api/session.ts';
import type { Session } from '../api/types.ts';
import { submitted } from '../components/filter-form.tsx';
import { LabelledInput } from '../components/labelled-field.tsx';
import { ErrorNote } from '../components/status.tsx';

/** Only the app's own paths are followed after sign-in (an open redirect would hand the session's trust to anyone). */
export const safeNext = (next: string | undefined): string => (next && next.startsWith('/') && !next.startsWith('//') ? next : '/console');

export function LoginPage() {
  const { next } = useSearch({ from: '/login' });
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  const login = useMutation({
    mutationFn: (form: FormData) => api<Session>('POST', '/api/v1/auth/login', { email: form.get('email'), password: form.get('password') }),
    onSuccess: async (session) => {
      signedIn(session);
      await navigate({ to: safeNext(next) });
    },
  });
  return (
    <main id="main" className="narrow">
      <h1>Sign in</h1>
      <form onSubmit={submitted(login.mutate)}>
        <LabelledInput label="Email" name="email" type="email" autoComplete="username" required />
        <LabelledInput label="Password" name="password" type="password" autoComplete="current-password" required />
        <ErrorNote error={login.error} what="Sign-in failed" />
        <button type="submit" disabled={login.isPending}>
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
  const send = useMutation({ mutationFn: (form: FormData) => api('POST', '/api/v1/auth/password-reset', { email: form.get('email') }) });
  return (
    <details>
      <summary>Forgot your password?</summary>
      <form onSubmit={submitted(send.mutate)}>
        <LabelledInput label="Account address for the reset link" name="email" type="email" autoComplete="username" required />
        <ErrorNote error={send.error} what="Asking for a reset link failed" />
        {send.isSuccess ? <p role="status">If an account has this address, a reset link is on its way. It works once, for one hour.</p> : null}
        <button type="submit" disabled={send.isPending}>
          Send reset link
        </button>
      </form>
    </details>
  );
}
