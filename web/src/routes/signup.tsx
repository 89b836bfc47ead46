import { Link, useNavigate } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client.ts';
import { useSignedIn } from '../api/session.ts';
import type { Session } from '../api/types.ts';
import { NewAccountFields } from '../components/account-fields.tsx';
import { ErrorNote } from '../components/status.tsx';

/** Self sign-up (DESIGN §10): the gateway answers 403 unless its operator opened it (TOLLGATE_SIGNUP=open). */
export function SignupPage() {
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      signedIn(await api<Session>('POST', '/api/v1/auth/signup', { name: form.get('name'), email: form.get('email'), password: form.get('password') }));
      await navigate({ to: '/console' });
    } catch (caught) {
      setError(caught);
    }
  };
  return (
    <main id="main" className="narrow">
      <h1>Sign up</h1>
      <form onSubmit={(event) => void submit(event)}>
        <NewAccountFields />
        <ErrorNote error={error} what="Sign-up failed" />
        <button type="submit">Create account</button>
      </form>
      <p>
        Have an account? <Link to="/login">Sign in</Link>
      </p>
    </main>
  );
}
