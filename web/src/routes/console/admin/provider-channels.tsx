import { useRef, useState } from 'react';
import type { AdminChannel, AdminChannelHealth, AdminProvider } from '../../../api/admin-types.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { ChannelsEditor } from './provider-channels-editor.tsx';

const STATE_TEXT: Record<AdminChannelHealth['state'], string> = { healthy: 'healthy', cooling: 'cooling down', probing: 'probing' };

const milliseconds = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : `${value} ms`);

function stateText(health: AdminChannelHealth | undefined): string {
  if (!health) return '—';
  if (health.state === 'cooling' && health.coolingUntil) return `${STATE_TEXT.cooling} until ${new Date(health.coolingUntil).toLocaleTimeString()}`;
  return STATE_TEXT[health.state];
}

/**
 * A provider's upstream channels and their health (DESIGN §12), from GET /admin/v1/providers: base URL, whether a key is set
 * (never the key), weight, priority, models, and the health the answering gateway process sees — state, attempts, errors,
 * error rate over the last 256 attempts, time to the response head p50/p99. "Edit channels of …" opens the channels as a form
 * (provider-channels-editor.tsx).
 */
export function ProviderChannels({ provider }: { provider: AdminProvider }) {
  const headingId = `channels-${provider.id}`;
  const channels = provider.channels ?? [];
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  // When the form closes (saved or cancelled), focus goes back to the button that opened it.
  const returnFocus = useRef(false);
  const close = () => {
    returnFocus.current = true;
    setEditing(false);
  };
  return (
    <section aria-labelledby={headingId} className="card">
      <h2 id={headingId}>Channels of {provider.id}</h2>
      <p className="muted">
        {channels.length === 1
          ? `One channel: all of ${provider.id}'s traffic goes to it.`
          : `The highest-priority healthy channels share ${provider.id}'s traffic by weight; a failing one cools down and is probed before it takes traffic again.`}{' '}
        Health is this gateway process's view.
      </p>
      <DataTable<AdminChannel>
        caption={`${provider.id} channels and their health`}
        what="channels"
        empty="This provider has no channel."
        rows={channels}
        rowKey={(channel) => channel.id}
        columns={[
          { header: 'Channel', cell: (channel) => channel.id, rowHeader: true },
          { header: 'Base URL', cell: (channel) => <span className="mono break">{channel.baseUrl}</span> },
          { header: 'API key', cell: (channel) => (channel.hasApiKey ? 'set' : 'not set') },
          { header: 'Weight', cell: (channel) => channel.weight, numeric: true },
          { header: 'Priority', cell: (channel) => channel.priority, numeric: true },
          { header: 'Models', cell: (channel) => (channel.models ? channel.models.join(', ') : 'all') },
          { header: 'State', cell: (channel) => stateText(channel.health) },
          { header: 'Requests', cell: (channel) => channel.health?.requests ?? 0, numeric: true },
          { header: 'Errors', cell: (channel) => channel.health?.errors ?? 0, numeric: true },
          { header: 'Error rate', cell: (channel) => `${((channel.health?.errorRate ?? 0) * 100).toFixed(1)} %`, numeric: true },
          { header: 'Latency p50', cell: (channel) => milliseconds(channel.health?.latencyMs.p50), numeric: true },
          { header: 'Latency p99', cell: (channel) => milliseconds(channel.health?.latencyMs.p99), numeric: true },
        ]}
      />
      {saved ? <p role="status">{saved}</p> : null}
      {editing ? (
        <ChannelsEditor
          provider={provider}
          onSaved={(message) => {
            close();
            setSaved(message);
          }}
          onCancel={close}
        />
      ) : (
        <button
          type="button"
          ref={(button) => {
            if (button && returnFocus.current) button.focus();
            returnFocus.current = false;
          }}
          onClick={() => {
            setSaved(null);
            setEditing(true);
          }}
        >
          Edit channels of {provider.id}
        </button>
      )}
    </section>
  );
}
