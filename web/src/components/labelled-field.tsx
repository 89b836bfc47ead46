import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from 'react';

interface FieldText {
  /** The visible label, which is also the control's accessible name. */
  label: ReactNode;
  /** A line between the label and the control, read out with it (aria-describedby) but kept out of its name. */
  hint?: ReactNode;
}

/**
 * The label with its control. With a hint the label names the control by `for` and the hint sits between them (as in the
 * GOV.UK pattern), so controls in a row still line up at the bottom; without one, the label wraps the control.
 */
function Field({ label, hint, ids, children }: FieldText & { ids: { control: string; hint: string }; children: ReactNode }) {
  if (!hint) {
    return (
      <label>
        {label}
        {children}
      </label>
    );
  }
  return (
    <div className="field">
      <label htmlFor={ids.control}>{label}</label>
      <span id={ids.hint} className="muted hint">
        {hint}
      </span>
      {children}
    </div>
  );
}

function useFieldIds(id: string | undefined) {
  const own = useId();
  return { control: id ?? `${own}control`, hint: `${own}hint` };
}

/** An input with its visible label and an optional hint. */
export function LabelledInput({ label, hint, ...input }: FieldText & InputHTMLAttributes<HTMLInputElement>) {
  const ids = useFieldIds(input.id);
  return (
    <Field label={label} hint={hint} ids={ids}>
      <input {...input} id={ids.control} aria-describedby={hint ? ids.hint : input['aria-describedby']} />
    </Field>
  );
}

export interface Choice {
  value: string;
  label: string;
}

/** A select with its visible label and an optional hint. */
export function LabelledSelect({ label, hint, choices, ...select }: FieldText & { choices: readonly Choice[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  const ids = useFieldIds(select.id);
  return (
    <Field label={label} hint={hint} ids={ids}>
      <select {...select} id={ids.control} aria-describedby={hint ? ids.hint : select['aria-describedby']}>
        {choices.map((choice) => (
          <option key={choice.value} value={choice.value}>
            {choice.label}
          </option>
        ))}
      </select>
    </Field>
  );
}
