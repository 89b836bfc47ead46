import { CopyButton } from './copy-button.tsx';

/** A ready call (a curl command, an SDK snippet) named for screen readers, with its copy button. */
export function CodeExample({ code, label = 'curl example', copyLabel = 'Copy curl command' }: { code: string; label?: string; copyLabel?: string }) {
  return (
    <>
      <pre aria-label={label}>{code}</pre>
      <CopyButton text={code} label={copyLabel} />
    </>
  );
}
