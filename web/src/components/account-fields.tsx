import { LabelledInput } from './labelled-field.tsx';

/** A new account's name, email (left out where an invitation names it) and password. */
export function NewAccountFields({ email = true }: { email?: boolean }) {
  return (
    <>
      <LabelledInput label="Name" name="name" autoComplete="name" required />
      {email ? <LabelledInput label="Email" name="email" type="email" autoComplete="email" required /> : null}
      <LabelledInput label="Password" name="password" type="password" autoComplete="new-password" required />
    </>
  );
}
