import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { AdminChannel, AdminProvider } from '../../../api/admin-types.ts';
import { api, ApiError } from '../../../api/client.ts';
import { LabelledInput } from '../../../components/labelled-field.tsx';
import { ErrorNote } from '../../../components/status.tsx';

/** One channel as the form holds it: text as typed, and which stored channel (if any) it edits. */
interface ChannelDraft {
  /** React's key for the fieldset; stays while the id is typed. */
  key: number;
  /** The stored channel this row edits (its id cannot change: its key belongs to it), or null for a new one. */
  storedId: string | null;
  hasApiKey: boolean;
  id: string;
  baseUrl: string;
  /** A new key; empty keeps the stored one. */
  apiKey: string;
  removeKey: boolean;
  weight: string;
  priority: string;
  /** Comma-separated model ids; empty: all. */
  models: string;
}

type ChannelField = 'id' | 'baseUrl' | 'apiKey' | 'weight' | 'priority' | 'models';

const draftOf = (channel: AdminChannel, key: number): ChannelDraft => ({
  key,
  storedId: channel.id,
  hasApiKey: channel.hasApiKey,
  id: channel.id,
  baseUrl: channel.baseUrl,
  apiKey: '',
  removeKey: false,
  weight: String(channel.weight),
  priority: String(channel.priority),
  models: channel.models?.join(', ') ?? '',
});

const newDraft = (key: number): ChannelDraft => ({ key, storedId: null, hasApiKey: false, id: '', baseUrl: '', apiKey: '', removeKey: false, weight: '1', priority: '0', models: '' });

/** A whole number as typed, or the text itself (the API names what is wrong with it); empty leaves the API's default. */
const numberOf = (text: string): number | string | undefined => (text.trim() === '' ? undefined : Number.isFinite(Number(text)) ? Number(text) : text);

/**
 * A channel of the PATCH body. The key is sent only when one was typed (it replaces the stored key) or "Remove the stored
 * key" is ticked (null); otherwise it is left out and the stored channel of the same id keeps its key (the admin API's rule).
 * A new channel with the key field empty is sent with null: it has none, even under the id of a channel removed here.
 */
function channelBody(draft: ChannelDraft): Record<string, unknown> {
  const apiKey = draft.apiKey.trim();
  const models = draft.models.split(',').map((model) => model.trim()).filter((model) => model !== '');
  const weight = numberOf(draft.weight);
  const priority = numberOf(draft.priority);
  return {
    id: draft.id.trim(),
    baseUrl: draft.baseUrl.trim(),
    ...(draft.removeKey ? { apiKey: null } : apiKey !== '' ? { apiKey } : draft.storedId === null ? { apiKey: null } : {}),
    ...(weight !== undefined ? { weight } : {}),
    ...(priority !== undefined ? { priority } : {}),
    models: models.length > 0 ? models : null,
  };
}

/** The field of row `index` the admin API's 400 names (`channels[1].baseUrl`), to mark it invalid. */
function invalidField(error: unknown, index: number, field: ChannelField): boolean {
  return error instanceof ApiError && error.param === `channels[${index}].${field}`;
}

/**
 * A provider's channels as a form: each stored one's base URL, key (never shown: typed anew, left empty to keep, or
 * removed), weight, priority and models; channels added and removed (at least one stays). Saving sends the whole list in
 * one PATCH /admin/v1/providers/:id; the admin API checks it (unique ids, URLs…) and its refusal shows under the form.
 */
export function ChannelsEditor({ provider, onSaved, onCancel }: { provider: AdminProvider; onSaved: (message: string) => void; onCancel: () => void }) {
  const client = useQueryClient();
  const [drafts, setDrafts] = useState<ChannelDraft[]>(() => (provider.channels ?? []).map(draftOf));
  const [nextKey, setNextKey] = useState(drafts.length);
  const save = useMutation({
    mutationFn: (channels: Record<string, unknown>[]) => api<AdminProvider>('PATCH', `/admin/v1/providers/${encodeURIComponent(provider.id)}`, { channels }),
    onSuccess: async (saved) => {
      await client.invalidateQueries({ queryKey: ['admin', 'providers'] });
      onSaved(`The channels of ${saved.id} were saved: ${saved.channels.length} channel${saved.channels.length === 1 ? '' : 's'}.`);
    },
  });
  const change = (key: number, fields: Partial<ChannelDraft>) => setDrafts((current) => current.map((draft) => (draft.key === key ? { ...draft, ...fields } : draft)));
  const add = () => {
    setDrafts((current) => [...current, newDraft(nextKey)]);
    setNextKey(nextKey + 1);
  };
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate(drafts.map(channelBody));
  };
  const formName = `Edit channels of ${provider.id}`;
  // The button that opened the form is gone: focus moves to the first field that can change.
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => form.current?.querySelector<HTMLInputElement>('input:not([readonly]):not([disabled])')?.focus(), []);
  return (
    <>
      {/* noValidate: the admin API checks the whole list (a duplicate id, a bad URL) and names the field in its answer. */}
      <form ref={form} onSubmit={submit} aria-label={formName} noValidate>
        <p className="muted">
          Saving replaces {provider.id}'s channels with this list. Keys are never shown: an empty key field keeps the stored key. A stored channel keeps its
          id; to rename one, remove it and add a channel with its key. Models: comma-separated model ids, empty for all.
        </p>
        {drafts.map((draft, index) => {
          const which = draft.storedId ?? `${index + 1} (new)`;
          const invalid = (field: ChannelField) => (invalidField(save.error, index, field) ? true : undefined);
          return (
            <fieldset key={draft.key}>
              <legend>Channel {which}</legend>
              <div className="row">
                <LabelledInput
                  label="Channel id"
                  value={draft.id}
                  onChange={(event) => change(draft.key, { id: event.target.value })}
                  readOnly={draft.storedId !== null}
                  required
                  autoComplete="off"
                  aria-invalid={invalid('id')}
                />
                <LabelledInput label="Base URL" type="url" value={draft.baseUrl} onChange={(event) => change(draft.key, { baseUrl: event.target.value })} required aria-invalid={invalid('baseUrl')} />
                <LabelledInput
                  label="API key"
                  type="password"
                  autoComplete="off"
                  value={draft.removeKey ? '' : draft.apiKey}
                  disabled={draft.removeKey}
                  onChange={(event) => change(draft.key, { apiKey: event.target.value })}
                  hint={draft.storedId === null ? 'Optional.' : draft.hasApiKey ? 'Set. Left empty, it stays.' : 'Not set.'}
                  aria-invalid={invalid('apiKey')}
                />
                <LabelledInput label="Weight" type="number" min={0} step={1} inputMode="numeric" value={draft.weight} onChange={(event) => change(draft.key, { weight: event.target.value })} aria-invalid={invalid('weight')} />
                <LabelledInput label="Priority" type="number" step={1} value={draft.priority} onChange={(event) => change(draft.key, { priority: event.target.value })} aria-invalid={invalid('priority')} />
                <LabelledInput label="Models" value={draft.models} onChange={(event) => change(draft.key, { models: event.target.value })} placeholder="all" aria-invalid={invalid('models')} />
              </div>
              <div className="actions">
                {draft.storedId !== null && draft.hasApiKey ? (
                  <label className="switch">
                    <input type="checkbox" checked={draft.removeKey} onChange={(event) => change(draft.key, { removeKey: event.target.checked, apiKey: '' })} />
                    Remove the stored key
                  </label>
                ) : null}
                <button
                  type="button"
                  className="secondary"
                  onClick={() => setDrafts((current) => current.filter((other) => other.key !== draft.key))}
                  disabled={drafts.length === 1}
                  aria-label={`Remove channel ${which}`}
                  title={drafts.length === 1 ? 'A provider keeps at least one channel.' : undefined}
                >
                  Remove channel
                </button>
              </div>
            </fieldset>
          );
        })}
        <div className="actions">
          {/* 32: the admin API's most channels a provider has (MAX_CHANNELS). */}
          <button type="button" className="secondary" onClick={add} disabled={drafts.length >= 32}>
            Add a channel
          </button>
          <button type="submit" disabled={save.isPending}>
            Save channels
          </button>
          <button type="button" className="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
      <ErrorNote error={save.error} what={`Saving the channels of ${provider.id} failed`} />
    </>
  );
}
