import type { SelectHTMLAttributes } from 'react';
import { useMe } from '../api/session.ts';
import { LabelledSelect } from './labelled-field.tsx';

/**
 * Which account: the signed-in user (value "", named `self`: "Me", "You") or one of their organisations (value its id).
 * `managedOnly` leaves out the organisations where the user is a plain member (crediting one is for owners and admins).
 */
export function AccountSelect({ label, self, managedOnly = false, ...select }: { label: string; self: string; managedOnly?: boolean } & SelectHTMLAttributes<HTMLSelectElement>) {
  const me = useMe();
  const orgs = (me.data?.orgs ?? []).filter((org) => !managedOnly || org.role !== 'member');
  return <LabelledSelect label={label} choices={[{ value: '', label: self }, ...orgs.map((org) => ({ value: org.id, label: org.name }))]} {...select} />;
}
