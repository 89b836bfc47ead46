import { Link, useParams } from '@tanstack/react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api } from '../api/client.ts';
import { submitted } from '../components/filter-form.tsx';
import { LabelledInput } from '../components/labelled-field.tsx';
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
  const save = useMutation({
    mutationFn: async (form: FormData) => {
      const password = String(form.get('password') ?? '');
      if (password !== String(form.get('repeat') ?? '')) throw new Error('the two passwords differ');
      await api('POST', '/api/v1/auth/password-reset/confirm', { token, password });
    },
    onSuccess: () => client.removeQueries({ queryKey: ['session'] }),
  });
  return (
    <main id="main" className="narrow">
      <h1>Set a new password</h1>
      {check.isPending ? (
        <Loading what="the reset link" />
      ) : save.isSuccess ? (
        <>
          <p role="status">Your password is set. Sessions signed in with the old one have ended.</p>
          <p>
            <Link to="/login">Sign in</Link>
          </p>
        </>
      ) : check.isError ? (
        isInvalidToken(check.error) ? <LinkGone /> : <ErrorNote error={check.error} what="Checking the link failed" />
      ) : isInvalidToken(save.error) ? (
        <LinkGone />
      ) : (
        <form onSubmit={submitted(save.mutate)}>
          <p className="muted">This link works once, until {new Date(check.data.expiresAt).toLocaleString()}.</p>
          <LabelledInput label="New password" name="password" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={512} required />
          <LabelledInput label="Repeat the new password" name="repeat" type="password" autoComplete="new-password" minLength={MIN_PASSWORD_LENGTH} maxLength={512} required />
          <ErrorNote error={save.error} what="Setting the password failed" />
          <button type="submit" disabled={save.isPending}>
            Set password
          </button>
        </form>
      )}
    </main>
  );
}
