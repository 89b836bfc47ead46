import { useQuery } from '@tanstack/react-query';
import type { AdminProvider } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import type { List } from '../../../api/types.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { ProviderChannels } from './provider-channels.tsx';

// Channel health changes as traffic flows: the page reads it again every 10 s.
const providersQuery = { queryKey: ['admin', 'providers'], queryFn: () => api<List<AdminProvider>>('GET', '/admin/v1/providers'), refetchInterval: 10_000 };

/**
 * /console/admin/providers: the vendors the gateway calls: type, first channel's base URL, whether an API key is set (never
 * the key), and each provider's channels with their health.
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
        ]}
      />
      {rows.map((provider) => (
        <ProviderChannels key={provider.id} provider={provider} />
      ))}
    </>
  );
}
