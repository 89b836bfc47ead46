import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { api } from '../api/client.ts';
import type { OrgRole } from '../api/types.ts';
import { ConfirmButton } from './confirm-button.tsx';
import { ErrorNote } from './status.tsx';

/** The roles, from the most rights to the fewest. */
export const ROLES: readonly OrgRole[] = ['owner', 'admin', 'member'];

/**
 * One member of an org, as the controls of both doors see it: the org's own page (`/api/v1/orgs/:id/members/:memberId`)
 * and the operator's (`/admin/v1/orgs/:id/members/:userId`). `path` is the member's resource; after a change the queries
 * under `refresh` are read again. The rules (who may, the last owner stays) are the service's; its refusals show here.
 */
export interface MemberControlProps {
  member: { id: string; name: string; email: string | null; role: OrgRole };
  path: string;
  refresh: readonly QueryKey[];
  /** Whether the viewer may change members (else the controls show, disabled). */
  manages: boolean;
}

function useMemberChange<T>(refresh: readonly QueryKey[], change: (input: T) => Promise<unknown>) {
  const client = useQueryClient();
  return useMutation({ mutationFn: change, onSuccess: () => Promise.all(refresh.map((queryKey) => client.invalidateQueries({ queryKey }))) });
}

export function MemberRoleSelect({ member, path, refresh, manages }: MemberControlProps) {
  const role = useMemberChange(refresh, (next: OrgRole) => api('PATCH', path, { role: next }));
  return (
    <>
      <label className="sr-only" htmlFor={`role-${member.id}`}>
        Role of {member.email ?? member.name}
      </label>
      <select id={`role-${member.id}`} value={member.role} disabled={!manages || role.isPending} onChange={(event) => role.mutate(event.target.value as OrgRole)}>
        {ROLES.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
      </select>
      <ErrorNote error={role.error} what="Changing the role failed" />
    </>
  );
}

export function RemoveMemberButton({ member, path, refresh, manages }: MemberControlProps) {
  const remove = useMemberChange(refresh, () => api('DELETE', path));
  const who = member.email ?? member.name;
  return (
    <>
      <ConfirmButton
        label={`Remove ${who}`}
        title={`Remove ${who} from the organisation?`}
        message="Their keys and bots for this organisation stop working at once."
        confirmLabel="Remove member"
        disabled={!manages}
        onConfirm={() => remove.mutate(undefined)}
      />
      <ErrorNote error={remove.error} what="Removing failed" />
    </>
  );
}
