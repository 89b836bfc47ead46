import { Link, useNavigate, useParams } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import { api } from '../api/client.ts';
import { useSession, useSignedIn } from '../api/session.ts';
import type { Session } from '../api/types.ts';
import { NewAccountFields } from '../components/account-fields.tsx';
import { ErrorNote, Loading } from '../components/status.tsx';

/** An org invitation: a signed-in user joins with one click; a new person signs up with the invited email. */
export function InvitePage() {
  const { token } = useParams({ from: '/invite/$token' });
  const session = useSession();
  const navigate = useNavigate();
  const signedIn = useSignedIn();
  const [error, setError] = useState<unknown>(null);
  const accept = async (body: unknown) => {
    setError(null);
    try {
      const answer = await api<Partial<Session> & { orgId: string }>('POST', `/api/v1/invitations/${encodeURIComponent(token)}/accept`, body);
      if (answer.csrfToken && answer.user) signedIn({ user: answer.user, csrfToken: answer.csrfToken });
      await navigate({ to: '/console/orgs/$id', params: { id: answer.orgId } });
    } catch (caught) {
      setError(caught);
    }
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    void accept({ name: form.get('name'), password: form.get('password') });
  };
  if (session.isPending) return <Loading what="your session" />;
  return (
    <main id="main" className="narrow">
      <h1>Join an organisation</h1>
      {session.data ? (
        <>
          <p>You are signed in as {session.data.user.email ?? session.data.user.name}.</p>
          <button type="button" onClick={() => void accept(undefined)}>
            Accept invitation
          </button>
        </>
      ) : (
        <form onSubmit={submit}>
          <p>
            New here? Choose your name and a password; your account uses the invited email. Already have an account? <Link to="/login" search={{ next: `/invite/${token}` }}>Sign in first</Link>.
          </p>
          <NewAccountFields email={false} />
          <button type="submit">Accept and create account</button>
        </form>
      )}
      <ErrorNote error={error} what="Accepting the invitation failed" />
    </main>
  );
}
