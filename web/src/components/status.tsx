import { ApiError } from '../api/client.ts';

/** What a signed-in customer who is not an operator is told on the operator pages (and by the admin API's 403 `operator_only`). */
export const OPERATORS_ONLY = "This page is for the gateway's operators only.";

/** An error shown where it happened, announced to screen readers. */
export function ErrorNote({ error, what }: { error: unknown; what?: string }) {
  if (!error) return null;
  if (error instanceof ApiError && error.code === 'operator_only') {
    return (
      <p role="alert" className="error">
        {OPERATORS_ONLY} ({error.status})
      </p>
    );
  }
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
