import { ApiError } from '../api/client.ts';

/** An error shown where it happened, announced to screen readers. */
export function ErrorNote({ error, what }: { error: unknown; what?: string }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const status = error instanceof ApiError && error.status > 0 ? ` (${error.status})` : '';
  return (
    <p role="alert" className="error">
      {what ? `${what}: ` : ''}
      {message}
      {status}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p role="status" className="muted">
      Loading {what}…
    </p>
  );
}
