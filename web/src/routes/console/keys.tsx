import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import type { CreatedKey, Key, List } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { KeyFields, keyFieldsOf } from '../../components/key-fields.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

/** /console/keys: create (secret shown once), edit limits, revoke with confirmation; an empty state that teaches. */
export function KeysPage() {
  const keys = useQuery({ queryKey: ['keys'], queryFn: () => api<List<Key>>('GET', '/api/v1/keys?limit=100') });
  const [created, setCreated] = useState<CreatedKey | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const active = (keys.data?.data ?? []).filter((key) => key.revokedAt === null);
  return (
    <>
      <h1>API keys</h1>
      {created ? <NewKeySecret created={created} onDone={() => setCreated(null)} /> : null}
      <CreateKeyForm onCreated={setCreated} />
      <section aria-labelledby="your-keys">
        <h2 id="your-keys">Your keys</h2>
        {keys.isPending ? <Loading what="keys" /> : null}
        <ErrorNote error={keys.error} what="Loading keys" />
        {keys.data && active.length === 0 && !created ? <NoKeysYet /> : null}
        {active.length > 0 ? (
          <div className="table-scroll">
            <table>
              <caption>{active.length} keys</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Key</th>
                  <th scope="col">Scope</th>
                  <th scope="col">Models</th>
                  <th scope="col">Limit</th>
                  <th scope="col">Spent</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {active.map((key) => (
                  <KeyRow key={key.id} apiKey={key} editing={editing === key.id} onEdit={() => setEditing(editing === key.id ? null : key.id)} />
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}

function NewKeySecret({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  return (
    <section aria-labelledby="new-key" className="notice">
      <h2 id="new-key">Your new key “{created.name}”</h2>
      <p>Copy it now: it is shown only this once. The gateway keeps only its hash.</p>
      <label>
        Secret key
        <input readOnly value={created.key} onFocus={(event) => event.currentTarget.select()} className="mono" />
      </label>
      <CopyButton text={created.key} label="Copy key" />
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
      <Snippet apiKey={created.key} />
    </section>
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
      <pre aria-label="curl example">{curl}</pre>
      <CopyButton text={curl} label="Copy curl command" />
      <h3>Or with the OpenAI SDK</h3>
      <pre aria-label="OpenAI SDK example">{sdk}</pre>
      <CopyButton text={sdk} label="Copy SDK example" />
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
  const me = useMe();
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
          <label>
            Key name
            <input name="name" required maxLength={200} />
          </label>
          <label>
            Paid by
            <select name="orgId" defaultValue="">
              <option value="">Me</option>
              {me.data?.orgs.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Scope
            <select name="scope" defaultValue="inference">
              <option value="inference">Models (inference)</option>
              <option value="management">Management API</option>
            </select>
          </label>
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

function KeyRow({ apiKey, editing, onEdit }: { apiKey: Key; editing: boolean; onEdit: () => void }) {
  const client = useQueryClient();
  const name = apiKey.name ?? apiKey.start;
  const update = useMutation({
    mutationFn: (body: unknown) => api<Key>('PATCH', `/api/v1/keys/${apiKey.id}`, body),
    onSuccess: async () => {
      onEdit();
      await client.invalidateQueries({ queryKey: ['keys'] });
    },
  });
  const revoke = useMutation({
    mutationFn: () => api('DELETE', `/api/v1/keys/${apiKey.id}`),
    onSuccess: () => client.invalidateQueries({ queryKey: ['keys'] }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    update.mutate(keyFieldsOf(new FormData(event.currentTarget)));
  };
  return (
    <>
      <tr>
        <th scope="row">{name}</th>
        <td className="mono">{apiKey.start}</td>
        <td>{apiKey.scope}</td>
        <td>{apiKey.allowedModels?.join(', ') ?? 'all'}</td>
        <td>{apiKey.limit ? `${apiKey.limit.amount} per ${apiKey.limit.period}` : 'none'}</td>
        <td className="number">{apiKey.spent}</td>
        <td>{apiKey.expiresAt ? apiKey.expiresAt.slice(0, 10) : 'never'}</td>
        <td>{shortTime(apiKey.lastUsedAt)}</td>
        <td className="actions">
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
          <ErrorNote error={revoke.error} what="Revoking failed" />
        </td>
      </tr>
      {editing ? (
        <tr>
          <td colSpan={9}>
            <form onSubmit={submit} aria-label={`Edit key ${name}`}>
              <KeyFields initial={apiKey} />
              <ErrorNote error={update.error} what="Saving failed" />
              <button type="submit" disabled={update.isPending}>
                Save changes
              </button>
            </form>
          </td>
        </tr>
      ) : null}
    </>
  );
}
