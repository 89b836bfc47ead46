import { useMutation, useQuery, useQueryClient, type UseQueryResult } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState } from 'react';
import { CAPABILITY_NAMES, type Assistant, type AssistantItem, type AssistantList } from '../../api/assistants.ts';
import { api } from '../../api/client.ts';
import { useMe } from '../../api/session.ts';
import { AssistantForm, type AssistantFields } from '../../components/assistant-form.tsx';
import { CodeExample } from '../../components/code-example.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';

const capabilityText = (mask: number): string => CAPABILITY_NAMES.filter(([bit]) => (mask & bit) !== 0).map(([, name]) => name).join(', ') || '—';

/** /console/assistants (DESIGN §11): the user's own assistants with every SPEC 2.6 field: create, edit, publish, delete. */
export function AssistantsPage() {
  const assistants = useQuery({ queryKey: ['assistants'], queryFn: () => api<AssistantList>('GET', '/api/v1/assistants?limit=100') });
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <>
      <h1>Assistants</h1>
      <p>
        An assistant is a saved chat set-up — instruction, model, knowledge and tools — with its own page at <span className="mono">/a/code</span>. You, and
        everyone when it is public, chat with it there or through <span className="mono">/v1/assistant/chat</span>; each chat is charged to whoever chats.
      </p>
      {saved ? (
        <p role="status" className="notice">
          {saved}
        </p>
      ) : null}
      <section aria-labelledby="your-assistants">
        <h2 id="your-assistants">Your assistants</h2>
        <AssistantsTable
          assistants={assistants}
          onEdit={(id) => {
            setSaved(null);
            setEditing(id);
          }}
          onDeleted={(item) => {
            if (editing === item.id) setEditing(null);
            setSaved(`“${item.title}” was deleted.`);
          }}
        />
      </section>
      {editing ? (
        <EditAssistant
          id={editing}
          onDone={(message) => {
            setEditing(null);
            setSaved(message);
          }}
        />
      ) : (
        <CreateAssistant onCreated={(created) => setSaved(`“${created.title}” was created: its page is /a/${created.mention}.`)} />
      )}
    </>
  );
}

function EmptyState() {
  const origin = window.location.origin;
  const curl = `curl ${origin}/v1/assistant/chat \\\n  -H "Authorization: Bearer $TOLLGATE_KEY" \\\n  -H "content-type: application/json" \\\n  -d '{"chatId":"chat-0001-0002-0003-0004","assistantCode":"your-code","message":"Hello"}'`;
  return (
    <div className="empty">
      <p>No assistants yet. Make one below: a title, a model and an instruction are enough. It starts private; untick “Private” to list it in the public catalog.</p>
      <p>Then chat with it on its page, or from your code with an API key:</p>
      <CodeExample code={curl} />
    </div>
  );
}

function AssistantsTable({ assistants, onEdit, onDeleted }: { assistants: UseQueryResult<AssistantList>; onEdit: (id: string) => void; onDeleted: (item: AssistantItem) => void }) {
  const me = useMe();
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: (item: AssistantItem) => api('DELETE', `/api/v1/assistants/${item.id}`),
    onSuccess: (_answer, item) => {
      onDeleted(item);
      return client.invalidateQueries({ queryKey: ['assistants'] });
    },
  });
  const orgName = (id: string | null) => (id ? (me.data?.orgs.find((org) => org.id === id)?.name ?? id) : null);
  const items = assistants.data?.data ?? [];
  const total = assistants.data?.total ?? 0;
  return (
    <>
      <DataTable
        caption={`${total} ${total === 1 ? 'assistant' : 'assistants'}${total > items.length ? `, the newest ${items.length} shown` : ''}`}
        what="assistants"
        emptyInstead={<EmptyState />}
        rows={items}
        rowKey={(item) => item.id}
        state={assistants}
        columns={[
          {
            header: 'Title',
            cell: (item) => (
              <>
                {item.title}
                {item.subtitle ? <div className="muted">{item.subtitle}</div> : null}
              </>
            ),
            rowHeader: true,
          },
          {
            header: 'Page',
            cell: (item) => (
              <Link to="/a/$mention" params={{ mention: item.mention }} className="mono">
                /a/{item.mention}
              </Link>
            ),
          },
          { header: 'Model', cell: (item) => <span className="mono">{item.modelId}</span> },
          {
            header: 'Access',
            cell: (item) =>
              `${item.access.isPrivate ? 'Private' : 'Public'}${item.access.orgId ? ` · ${orgName(item.access.orgId)}` : ''}${item.access.isFree ? '' : ` · ${item.access.installPrice} to install`}`,
          },
          { header: 'Capabilities', cell: (item) => capabilityText(item.capabilities) },
          { header: 'Updated', cell: (item) => item.updateDate.slice(0, 10) },
          {
            header: 'Actions',
            cell: (item) => (
              <div className="actions">
                <button type="button" onClick={() => onEdit(item.id)}>
                  Edit {item.title}
                </button>
                <ConfirmButton
                  label={`Delete ${item.title}`}
                  title={`Delete the assistant “${item.title}”?`}
                  message={`Its page /a/${item.mention} and its code stop working at once, for you, the API and any bot that uses it; its chats are forgotten. This cannot be undone.`}
                  confirmLabel="Delete assistant"
                  onConfirm={() => remove.mutate(item)}
                />
              </div>
            ),
          },
        ]}
      />
      <ErrorNote error={remove.error} what="Deleting failed" />
    </>
  );
}

function CreateAssistant({ onCreated }: { onCreated: (assistant: Assistant) => void }) {
  const client = useQueryClient();
  const [generation, setGeneration] = useState(0);
  const create = useMutation({
    mutationFn: (fields: AssistantFields) => api<Assistant>('POST', '/api/v1/assistants', fields),
    onSuccess: (assistant) => {
      onCreated(assistant);
      // A fresh, empty form for the next one.
      setGeneration((value) => value + 1);
      return client.invalidateQueries({ queryKey: ['assistants'] });
    },
  });
  return (
    <section aria-labelledby="create-assistant">
      <h2 id="create-assistant">Create an assistant</h2>
      <AssistantForm key={generation} submitLabel="Create assistant" busy={create.isPending} error={create.error} onSubmit={(fields) => create.mutate(fields)} />
    </section>
  );
}

function EditAssistant({ id, onDone }: { id: string; onDone: (message: string) => void }) {
  const client = useQueryClient();
  const assistant = useQuery({ queryKey: ['assistant', id], queryFn: () => api<Assistant>('GET', `/api/v1/assistants/${id}`) });
  const update = useMutation({
    mutationFn: (fields: AssistantFields) => api<Assistant>('PATCH', `/api/v1/assistants/${id}`, fields),
    onSuccess: async (saved) => {
      client.setQueryData(['assistant', id], saved);
      await client.invalidateQueries({ queryKey: ['assistants'] });
      onDone(`“${saved.title}” was saved.`);
    },
  });
  return (
    <section aria-labelledby="edit-assistant">
      <h2 id="edit-assistant">Edit {assistant.data ? `“${assistant.data.title}”` : 'the assistant'}</h2>
      {assistant.isPending ? <Loading what="the assistant" /> : null}
      <ErrorNote error={assistant.error} what="Loading the assistant" />
      {assistant.data ? (
        <>
          <p className="muted">
            Id <span className="mono">{assistant.data.id}</span>, created {assistant.data.createDate.slice(0, 10)}.
          </p>
          <AssistantForm key={assistant.data.updateDate} assistant={assistant.data} submitLabel="Save changes" busy={update.isPending} error={update.error} onSubmit={(fields) => update.mutate(fields)} />
        </>
      ) : null}
      <button type="button" className="secondary" onClick={() => onDone('')}>
        Cancel editing
      </button>
    </section>
  );
}
