import type { FormEvent, ReactNode } from 'react';

/** The trimmed text of every named control of a form; empty ones left out. */
export function formValues(form: HTMLFormElement): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new FormData(form)) {
    const text = typeof value === 'string' ? value.trim() : '';
    if (text) values[name] = text;
  }
  return values;
}

/** A form's submit handler that hands its data to `act` (a mutation's `mutate`). */
export const submitted =
  (act: (form: FormData) => void) =>
  (event: FormEvent<HTMLFormElement>): void => {
    event.preventDefault();
    act(new FormData(event.currentTarget));
  };

/** A row of filters (labelled fields as children) and a submit button; hands the filled-in values to `onApply`. */
export function FilterForm({ label, onApply, children, submitLabel = 'Filter' }: { label: string; onApply: (values: Record<string, string>) => void; children: ReactNode; submitLabel?: string }) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    onApply(formValues(event.currentTarget));
  };
  return (
    <form onSubmit={submit} className="row filters" aria-label={label}>
      {children}
      <button type="submit">{submitLabel}</button>
    </form>
  );
}
