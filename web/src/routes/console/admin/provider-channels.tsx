import type { AdminProvider } from '../../../api/admin-types.ts';

/**
 * A provider's upstream channels and their health (DESIGN §12). Today a provider has one channel, its base URL; the change
 * that brings channels to the admin API fills this section with each channel (base URL, weight, priority, models) and its
 * health (state, errors, error rate, latency p50/p99) from GET /admin/v1/providers/:id.
 */
export function ProviderChannels({ provider }: { provider: AdminProvider }) {
  const headingId = `channels-${provider.id}`;
  return (
    <section aria-labelledby={headingId} className="card">
      <h2 id={headingId}>Channels of {provider.id}</h2>
      <p className="muted">
        One channel: all of {provider.id}'s traffic goes to <span className="mono break">{provider.baseUrl}</span>.
      </p>
    </section>
  );
}
