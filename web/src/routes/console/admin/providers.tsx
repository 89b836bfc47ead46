import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { AdminProvider } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import type { List } from '../../../api/types.ts';
import { ConfirmButton } from '../../../components/confirm-button.tsx';
import { DataTable } from '../../../components/data-table.tsx';
import { LabelledInput, LabelledSelect } from '../../../components/labelled-field.tsx';
import { ErrorNote } from '../../../components/status.tsx';
import { ProviderChannels } from './provider-channels.tsx';

// Channel health changes as traffic flows: the page reads it again every 10 s.
const providersQuery = { queryKey: ['admin', 'providers'], queryFn: () => api<List<AdminProvider>>('GET', '/admin/v1/providers'), refetchInterval: 10_000 };

/**
 * /console/admin/providers: the vendors the gateway calls: type, first channel's base URL, whether an API key is set (never
 * the key), and each provider's channels with their health and a form to edit them; a one-channel provider stored or changed,
 * a provider deleted.
 */
export function AdminProvidersPage() {
  const providers = useQuery(providersQuery);
  const rows = providers.data?.data ?? [];
  return (
    <>
      <h1>Providers</h1>
      <p className="muted">
        Providers stored with `tollgate providers …` or PUT /admin/v1/providers/:id. Where none is stored under an id, the gateway calls the vendor set in
        its configuration (OPENAI_API_KEY and OPENAI_BASE_URL, ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL). API keys are kept sealed and never shown.
      </p>
      <DataTable
        caption="Stored providers"
        what="providers"
        empty="No provider is stored: the gateway calls the vendors of its configuration."
        rows={rows}
        rowKey={(provider) => provider.id}
        state={providers}
        columns={[
          { header: 'Provider', cell: (provider) => provider.id, rowHeader: true },
          { header: 'Type', cell: (provider) => provider.type },
          { header: 'Base URL', cell: (provider) => <span className="mono break">{provider.baseUrl}</span> },
          { header: 'Channels', cell: (provider) => provider.channels?.length ?? 1, numeric: true },
          { header: 'API key', cell: (provider) => (provider.hasApiKey ? 'set' : 'not set') },
          { header: 'Actions', cell: (provider) => <DeleteProvider provider={provider} /> },
        ]}
      />
      <StoreProvider stored={rows} />
      {rows.map((provider) => (
        <ProviderChannels key={provider.id} provider={provider} />
      ))}
    </>
  );
}

/**
 * Stores a one-channel provider (PUT /admin/v1/providers/:id), or changes a stored one (PATCH: the fields given; an empty
 * API key keeps the stored key). Several channels are edited under each provider's channels (provider-channels-editor.tsx).
 */
function StoreProvider({ stored }: { stored: readonly AdminProvider[] }) {
  const client = useQueryClient();
  const [done, setDone] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: ({ id, body, exists }: { id: string; body: Record<string, string>; exists: boolean }) =>
      api<AdminProvider>(exists ? 'PATCH' : 'PUT', `/admin/v1/providers/${encodeURIComponent(id)}`, body),
    onSuccess: (provider, { exists }) => {
      setDone(`Provider ${provider.id} was ${exists ? 'changed' : 'stored'}.`);
      return client.invalidateQueries({ queryKey: ['admin', 'providers'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const id = text('id');
    const apiKey = text('apiKey');
    const body: Record<string, string> = { type: text('type'), baseUrl: text('baseUrl'), ...(apiKey ? { apiKey } : {}) };
    setDone(null);
    save.mutate({ id, body, exists: stored.some((provider) => provider.id === id) });
  };
  return (
    <section aria-labelledby="store-provider" className="card">
      <h2 id="store-provider">Store a provider</h2>
      <form onSubmit={submit} aria-labelledby="store-provider">
        <LabelledInput label="Provider id" name="id" required pattern="[A-Za-z0-9][A-Za-z0-9._-]*" hint="The name models route to; an id already stored is changed." />
        <LabelledSelect label="Type" name="type" defaultValue="openai" choices={[{ value: 'openai', label: 'OpenAI format' }, { value: 'anthropic', label: 'Anthropic format' }]} />
        <LabelledInput label="Base URL" name="baseUrl" type="url" required />
        <LabelledInput label="API key" name="apiKey" type="password" autoComplete="off" hint="Kept sealed, never shown again. Left empty, a stored provider keeps its key." />
        <button type="submit" disabled={save.isPending}>
          Store provider
        </button>
      </form>
      {done ? <p role="status">{done}</p> : null}
      <ErrorNote error={save.error} what="Storing the provider failed" />
    </section>
  );
}

/** Deletes a stored provider after a confirmation; the admin API refuses one that a model still routes to (shown here). */
function DeleteProvider({ provider }: { provider: AdminProvider }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/admin/v1/providers/${encodeURIComponent(provider.id)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['admin', 'providers'] }),
  });
  return (
    <>
      <ConfirmButton
        label={`Delete provider ${provider.id}`}
        title={`Delete the provider ${provider.id}?`}
        message="Its stored key is deleted with it. Where no provider is stored under this id, the gateway calls the vendor of its configuration."
        confirmLabel="Delete provider"
        onConfirm={() => remove.mutate()}
        disabled={remove.isPending}
      />
      <ErrorNote error={remove.error} what={`Deleting ${provider.id} failed`} />
    </>
  );
}
