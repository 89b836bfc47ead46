import { useId, type ReactNode } from 'react';
import { CopyButton } from './copy-button.tsx';

/**
 * A secret the gateway shows this once (an API key, a bot token): a notice with the secret in a read-only field, its copy
 * button and "I have copied it", which closes it. `children` follow (a ready call with the secret in it).
 */
export function SecretOnce({ heading, note, label, secret, copyLabel, onDone, children }: { heading: ReactNode; note: ReactNode; label: string; secret: string; copyLabel: string; onDone: () => void; children?: ReactNode }) {
  const headingId = useId();
  return (
    <section aria-labelledby={headingId} className="notice">
      <h2 id={headingId}>{heading}</h2>
      <p>{note}</p>
      <label>
        {label}
        <input readOnly value={secret} onFocus={(event) => event.currentTarget.select()} className="mono" />
      </label>
      <CopyButton text={secret} label={copyLabel} />
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
      {children}
    </section>
  );
}
