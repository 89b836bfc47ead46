import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api } from '../../api/client.ts';
import { usePagedList } from '../../api/paged-list.ts';
import type { AddedKnowledgeDocument, KnowledgeBase, KnowledgeDocument, List } from '../../api/types.ts';
import { CodeExample } from '../../components/code-example.tsx';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { LabelledInput, LabelledSelect } from '../../components/labelled-field.tsx';
import { ErrorNote } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

const FORMATS = [
  { value: 'text', label: 'Plain text' },
  { value: 'markdown', label: 'Markdown' },
];

const count = (value: number): string => value.toLocaleString('en');

/**
 * /console/knowledge: the user's knowledge bases (SPEC's /v1/database/*): create, open one to see its documents and add a
 * document (its embedding is charged to the user's balance), delete after a confirmation.
 */
export function KnowledgePage() {
  const [openId, setOpenId] = useState<string | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const { rows, pages } = usePagedList<KnowledgeBase>(['knowledge'], '/api/v1/knowledge', { limit: 50 });
  const open = rows.find((base) => base.id === openId);
  return (
    <>
      <h1>Knowledge bases</h1>
      <p className="muted">
        A knowledge base holds documents an assistant answers from. Each document is cut into chunks and embedded when you add it; the embedding is charged to your own balance, as
        /v1/database/add charges it.
      </p>
      <CreateBase
        onCreated={(base) => {
          setDeleted(null);
          setOpenId(base.id);
        }}
      />
      <section aria-labelledby="your-bases">
        <h2 id="your-bases">Your knowledge bases</h2>
        {deleted ? <p role="status">Deleted “{deleted}”.</p> : null}
        <DataTable
          caption={`${rows.length === 1 ? '1 knowledge base' : `${rows.length} knowledge bases`}, newest first`}
          what="knowledge bases"
          emptyInstead={<NoBasesYet />}
          rows={rows}
          rowKey={(base) => base.id}
          state={pages}
          more={pages}
          columns={[
            { header: 'Title', cell: (base) => base.title, rowHeader: true },
            { header: 'Id', cell: (base) => <span className="mono">{base.id}</span> },
            { header: 'Documents', cell: (base) => count(base.documents), numeric: true },
            { header: 'Chunks', cell: (base) => count(base.chunks), numeric: true },
            { header: 'Size (characters)', cell: (base) => count(base.characters), numeric: true },
            { header: 'Created (UTC)', cell: (base) => shortTime(base.createdAt) },
            {
              header: 'Actions',
              cell: (base) => (
                <BaseActions
                  base={base}
                  isOpen={base.id === openId}
                  onOpen={setOpenId}
                  onDeleted={() => {
                    setDeleted(base.title);
                    if (base.id === openId) setOpenId(null);
                  }}
                />
              ),
            },
          ]}
        />
      </section>
      {open ? <BaseDetails base={open} onClose={() => setOpenId(null)} /> : null}
    </>
  );
}

function CreateBase({ onCreated }: { onCreated: (base: KnowledgeBase) => void }) {
  const client = useQueryClient();
  const create = useMutation({
    mutationFn: (title: string) => api<KnowledgeBase>('POST', '/api/v1/knowledge', { title }),
    onSuccess: async (base) => {
      await client.invalidateQueries({ queryKey: ['knowledge'] });
      onCreated(base);
    },
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    create.mutate(String(new FormData(form).get('title') ?? '').trim(), { onSuccess: () => form.reset() });
  };
  return (
    <section aria-labelledby="create-base">
      <h2 id="create-base">Create a knowledge base</h2>
      <form onSubmit={submit} className="row">
        <LabelledInput label="Knowledge base title" name="title" required maxLength={200} />
        <button type="submit" disabled={create.isPending}>
          Create knowledge base
        </button>
      </form>
      <ErrorNote error={create.error} what="Creating the knowledge base failed" />
    </section>
  );
}

function BaseActions({ base, isOpen, onOpen, onDeleted }: { base: KnowledgeBase; isOpen: boolean; onOpen: (id: string) => void; onDeleted: () => void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/api/v1/knowledge/${encodeURIComponent(base.id)}`),
    onSuccess: async () => {
      onDeleted();
      await client.invalidateQueries({ queryKey: ['knowledge'] });
    },
  });
  return (
    <>
      <div className="actions">
        <button type="button" onClick={() => onOpen(base.id)} aria-label={`Open ${base.title}`} aria-pressed={isOpen}>
          Open
        </button>
        <ConfirmButton
          label="Delete"
          title={`Delete the knowledge base “${base.title}”?`}
          message={`Its ${base.documents === 1 ? 'document' : `${count(base.documents)} documents`} and their chunks are deleted for good; assistants linked to it stop finding them.`}
          confirmLabel="Delete knowledge base"
          onConfirm={() => remove.mutate()}
          disabled={remove.isPending}
          ariaLabel={`Delete ${base.title}`}
        />
      </div>
      <ErrorNote error={remove.error} what="Deleting failed" />
    </>
  );
}

function BaseDetails({ base, onClose }: { base: KnowledgeBase; onClose: () => void }) {
  const documents = useQuery({
    queryKey: ['knowledge', base.id, 'documents'],
    queryFn: () => api<List<KnowledgeDocument>>('GET', `/api/v1/knowledge/${encodeURIComponent(base.id)}/documents`),
  });
  return (
    <section aria-labelledby="base-details" className="panel">
      <h2 id="base-details">Knowledge base “{base.title}”</h2>
      <p className="muted">
        Link it to an assistant with <code className="mono">{`"database": {"id": "${base.id}", "requestFrequency": "always", "chunks": 3}`}</code>.
      </p>
      <h3>Documents</h3>
      <DataTable
        caption="Documents, oldest first"
        what="documents"
        empty="No documents yet. Add one below: plain text or Markdown (cut at its headings)."
        rows={documents.data?.data ?? []}
        rowKey={(document) => document.id}
        state={documents}
        columns={[
          { header: 'Title', cell: (document) => document.title, rowHeader: true },
          { header: 'Size (characters)', cell: (document) => count(document.characters), numeric: true },
          { header: 'Chunks', cell: (document) => count(document.chunks), numeric: true },
          { header: 'Added (UTC)', cell: (document) => shortTime(document.createdAt) },
        ]}
      />
      <AddDocument base={base} />
      <button type="button" onClick={onClose}>
        Close {base.title}
      </button>
    </section>
  );
}

function AddDocument({ base }: { base: KnowledgeBase }) {
  const client = useQueryClient();
  const add = useMutation({
    mutationFn: (body: { title: string; text: string; format: string }) => api<AddedKnowledgeDocument>('POST', `/api/v1/knowledge/${encodeURIComponent(base.id)}/documents`, body),
    onSuccess: () => Promise.all([client.invalidateQueries({ queryKey: ['knowledge'] }), client.invalidateQueries({ queryKey: ['me'] })]),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    add.mutate({ title: String(data.get('title') ?? '').trim(), text: String(data.get('text') ?? ''), format: String(data.get('format') ?? 'text') }, { onSuccess: () => form.reset() });
  };
  return (
    <form onSubmit={submit} aria-labelledby="add-document">
      <h3 id="add-document">Add a document to {base.title}</h3>
      <div className="row">
        <LabelledInput label="Document title" name="title" required maxLength={200} />
        <LabelledSelect label="Format" name="format" defaultValue="text" choices={FORMATS} />
      </div>
      <label>
        Text
        <textarea name="text" required rows={8} />
      </label>
      <p className="muted">The text is embedded at once; the cost is charged to your balance.</p>
      <ErrorNote error={add.error} what="Adding the document failed" />
      {add.data && add.isSuccess ? (
        <p role="status">
          Added “{add.data.title}”: {count(add.data.chunks)} {add.data.chunks === 1 ? 'chunk' : 'chunks'}, {count(add.data.embeddingTokens)} embedding tokens, charged {add.data.cost}.
        </p>
      ) : null}
      <div>
        <button type="submit" disabled={add.isPending}>
          {add.isPending ? 'Adding…' : 'Add document'}
        </button>
      </div>
    </form>
  );
}

/** The empty state: how bases are made and used, with a ready call for scripts. */
function NoBasesYet() {
  const curl = `curl ${window.location.origin}/v1/database/create \\\n  -H "Authorization: Bearer $TOLLGATE_KEY" \\\n  -H "content-type: application/json" \\\n  -d '{"title":"Product manuals"}'`;
  return (
    <div className="empty">
      <p>
        <strong>No knowledge bases yet.</strong> Create one above, add documents to it, then link it to an assistant (its <code className="mono">database</code> field) so the
        assistant answers from them. Scripts do the same with an API key:
      </p>
      <CodeExample code={curl} />
    </div>
  );
}
