import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from '@tanstack/react-router';
import { useId } from 'react';
import { api } from '../../api/client.ts';
import type { Org } from '../../api/types.ts';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { OrgTabs, useOrg } from './org.tsx';

/**
 * /console/orgs/:id/api: the org's API settings. Prompt caching is switched by owners and admins; a member sees the switch
 * disabled with the reason, and a refusal from the API (a role changed since the page loaded) is shown beside the switch.
 */
export function OrgApiPage() {
  const { id } = useParams({ from: '/console/orgs/$id/api' });
  const org = useOrg(id);
  const client = useQueryClient();
  const reasonId = useId();
  const save = useMutation({
    mutationFn: (promptCaching: boolean) => api<Org>('PATCH', `/api/v1/orgs/${encodeURIComponent(id)}`, { promptCaching }),
    onSuccess: (updated) => {
      client.setQueryData(['org', id], updated);
      return client.invalidateQueries({ queryKey: ['me'] });
    },
  });
  const member = org.data?.role === 'member';
  return (
    <>
      <OrgTabs org={org.data} id={id} />
      {org.isPending ? <Loading what="the organisation" /> : null}
      <ErrorNote error={org.error} what="Loading the organisation" />
      {org.data ? (
        <section aria-labelledby="caching">
          <h2 id="caching">Prompt caching</h2>
          <p>When on, the gateway asks vendors to cache long prompt prefixes of this organisation's calls; cached input is billed at the vendor's cache prices.</p>
          <label className="switch">
            <input
              type="checkbox"
              role="switch"
              checked={org.data.promptCaching}
              disabled={member || save.isPending}
              aria-describedby={member ? reasonId : undefined}
              onChange={(event) => save.mutate(event.target.checked)}
            />
            Prompt caching
          </label>
          {member ? (
            <p id={reasonId} className="muted">
              Only the organisation's owners and admins can change this; you are a member.
            </p>
          ) : null}
          <ErrorNote error={save.error} what="Changing prompt caching failed" />
          {save.isSuccess ? <p role="status">Saved: prompt caching is {save.data.promptCaching ? 'on' : 'off'}.</p> : null}
        </section>
      ) : null}
    </>
  );
}
