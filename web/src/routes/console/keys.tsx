import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import type { CreatedKey, Key, List } from '../../api/types.ts';
import { AccountSelect } from '../../components/account-select.tsx';
import { CodeExample } from '../../components/code-example.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { KeyFields, keyFieldsOf } from '../../components/key-fields.tsx';
import { LabelledInput, LabelledSelect } from '../../components/labelled-field.tsx';
import { SecretOnce } from '../../components/secret-once.tsx';
import { ErrorNote } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

const SCOPES = [
  { value: 'inference', label: 'Models (inference)' },
  { value: 'management', label: 'Management API' },
];

/** /console/keys: create (secret shown once), edit limits, revoke with confirmation; an empty state that teaches. */
export function KeysPage() {
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => api<List<Key>>('GET', '/api/v1/keys?limit=100') });
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const active = (keys.data?.data ?? []).filter((key) => key.revokedAt === null);
  const nameOf = (key: Key) => key.name ?? key.start;
  return (
    <>
      <h1>API keys</h1>
      {created ? (
        <SecretOnce heading={`Your new key “${created.name}”`} note="Copy it now: it is shown only this once. The gateway keeps only its hash." label="Secret key" secret={created.key} copyLabel="Copy key" onDone={() => setCreated(null)}>
          <Snippet apiKey={created.key} />
        </SecretOnce>
      ) : null}
      <CreateKeyForm onCreated={setCreated} />
      <section aria-labelledby="your-keys">
        <h2 id="your-keys">Your keys</h2>
        <DataTable
          caption={`${active.length} keys`}
          what="keys"
          emptyInstead={created ? null : <NoKeysYet />}
          rows={active}
          rowKey={(key) => key.id}
          state={keys}
          rowDetails={(key) => (editing === key.id ? <EditKey apiKey={key} name={nameOf(key)} onSaved={() => setEditing(null)} /> : null)}
          columns={[
            { header: 'Name', cell: nameOf, rowHeader: true },
            { header: 'Key', cell: (key) => <span className="mono">{key.start}</span> },
            { header: 'Scope', cell: (key) => key.scope },
            { header: 'Models', cell: (key) => key.allowedModels?.join(', ') ?? 'all' },
            { header: 'Limit', cell: (key) => (key.limit ? `${key.limit.amount} per ${key.limit.period}` : 'none') },
            { header: 'Spent', cell: (key) => key.spent, numeric: true },
            { header: 'Expires', cell: (key) => (key.expiresAt ? key.expiresAt.slice(0, 10) : 'never') },
            { header: 'Last used', cell: (key) => shortTime(key.lastUsedAt) },
            { header: 'Actions', cell: (key) => <KeyActions apiKey={key} name={nameOf(key)} editing={editing === key.id} onEdit={() => setEditing(editing === key.id ? null : key.id)} /> },
          ]}
        />
      </section>
    </>
  );
}

/** A ready call with the page's own origin as the base URL. */
function Snippet({ apiKey }: { apiKey?: string }) {
  const base = `${window.location.origin}/v1`;
  const key = apiKey ?? '$TOLLGATE_KEY';
  const curl = `curl ${base}/chat/completions \\\n  -H "Authorization: Bearer ${key}" \\\n  -H "content-type: application/json" \\\n  -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`;
  const sdk = `import OpenAI from 'openai';\nconst client = new OpenAI({ apiKey: '${key}', baseURL: '${base}' });\nconst answer = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });`;
  return (
    <div className="snippets">
      <h3>Call it with curl</h3>
      <CodeExample code={curl} />
      <h3>Or with the OpenAI SDK</h3>
      <CodeExample code={sdk} label="OpenAI SDK example" copyLabel="Copy SDK example" />
    </div>
  );
}

function NoKeysYet() {
  return (
    <div className="empty">
      <p>
        <strong>No keys yet.</strong> Create one above: give it a name and press “Create key”. Then call any model with it, for example:
      </p>
      <Snippet />
    </div>
  );
}

function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (body: unknown) => api<CreatedKey>('POST', '/api/v1/keys', body),
    onSuccess: async (key) => {
      onCreated(key);
      await client.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const orgId = String(form.get('orgId') ?? '');
    create.mutate({ name: String(form.get('name') ?? '').trim(), scope: form.get('scope'), ...(orgId ? { orgId } : {}), ...keyFieldsOf(form) }, { onSuccess: () => (event.target as HTMLFormElement).reset() });
  };
  return (
    <section aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <form onSubmit={submit}>
        <div className="row">
          <LabelledInput label="Key name" name="name" required maxLength={200} />
          <AccountSelect label="Paid by" self="Me" name="orgId" defaultValue="" />
          <LabelledSelect label="Scope" name="scope" defaultValue="inference" choices={SCOPES} />
        </div>
        <KeyFields />
        <ErrorNote error={create.error} what="Creating the key failed" />
        <button type="submit" disabled={create.isPending}>
          Create key
        </button>
      </form>
    </section>
  );
}

function KeyActions({ apiKey, name, editing, onEdit }: { apiKey: Key; name: string; editing: boolean; onEdit: () => void }) {
  const client = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => api('DELETE', `/api/v1/keys/${apiKey.id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['keys'] }),
  });
  return (
    <>
      <div className="actions">
        <button type="button" onClick={onEdit} aria-expanded={editing} aria-label={`Edit ${name}`}>
          Edit
        </button>
        <ConfirmButton
          label={`Revoke ${name}`}
          title={`Revoke the key “${name}”?`}
          message="Every call with it fails from now on, on every node, streams in progress too. This cannot be undone."
          confirmLabel="Revoke key"
          onConfirm={() => revoke.mutate()}
        />
      </div>
      <ErrorNote error={revoke.error} what="Revoking failed" />
    </>
  );
}

/** The row's limits, models and expiry, edited under it. */
function EditKey({ apiKey, name, onSaved }: { apiKey: Key; name: string; onSaved: () => void }) {
  const client = useQueryClient();
  const update = useMutation({
    mutationFn: (body: unknown) => api<Key>('PATCH', `/api/v1/keys/${apiKey.id}`, body),
    onSuccess: async () => {
      onSaved();
      await client.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    update.mutate(keyFieldsOf(new FormData(event.currentTarget)));
  };
  return (
    <form onSubmit={submit} aria-label={`Edit key ${name}`}>
      <KeyFields initial={apiKey} />
      <ErrorNote error={update.error} what="Saving failed" />
      <button type="submit" disabled={update.isPending}>
        Save changes
      </button>
    </form>
  );
}
