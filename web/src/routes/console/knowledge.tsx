import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, query } from '../../api/client.ts';
import type { AddedKnowledgeDocument, KnowledgeBase, KnowledgeDocument, List } from '../../api/types.ts';
import { ConfirmButton } from '../../components/confirm-button.tsx';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

const count = (value: number): string => value.toLocaleString('en');

/**
 * /console/knowledge: the user's knowledge bases (SPEC's /v1/database/*): create, open one to see its documents and add a
 * document (its embedding is charged to the user's balance), delete after a confirmation.
 */
export function KnowledgePage() {
  const [openId, setOpenId] = useState<string | null>(null);
  const [deleted, setDeleted] = useState<string | null>(null);
  const bases = useInfiniteQuery({
    queryKey: ['knowledge'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api<List<KnowledgeBase>>('GET', `/api/v1/knowledge${query({ limit: 50, cursor: pageParam })}`),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const rows = bases.data?.pages.flatMap((page) => page.data) ?? [];
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
        {bases.isPending ? <Loading what="knowledge bases" /> : null}
        <ErrorNote error={bases.error} what="Loading knowledge bases" />
        {deleted ? <p role="status">Deleted “{deleted}”.</p> : null}
        {bases.data && rows.length === 0 ? <NoBasesYet /> : null}
        {rows.length > 0 ? (
          <BasesTable
            rows={rows}
            openId={openId}
            onOpen={setOpenId}
            onDeleted={(base) => {
              setDeleted(base.title);
              if (base.id === openId) setOpenId(null);
            }}
          />
        ) : null}
        {bases.hasNextPage ? (
          <button type="button" onClick={() => void bases.fetchNextPage()} disabled={bases.isFetchingNextPage}>
            Load more
          </button>
        ) : null}
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
        <label>
          Knowledge base title
          <input name="title" required maxLength={200} />
        </label>
        <button type="submit" disabled={create.isPending}>
          Create knowledge base
        </button>
      </form>
      <ErrorNote error={create.error} what="Creating the knowledge base failed" />
    </section>
  );
}

function BasesTable({ rows, openId, onOpen, onDeleted }: { rows: readonly KnowledgeBase[]; openId: string | null; onOpen: (id: string) => void; onDeleted: (base: KnowledgeBase) => void }) {
  return (
    <div className="table-scroll">
      <table>
        <caption>{rows.length === 1 ? '1 knowledge base' : `${rows.length} knowledge bases`}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Id</th>
            <th scope="col">Documents</th>
            <th scope="col">Chunks</th>
            <th scope="col">Size (characters)</th>
            <th scope="col">Created (UTC)</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((base) => (
            <BaseRow key={base.id} base={base} isOpen={base.id === openId} onOpen={onOpen} onDeleted={onDeleted} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BaseRow({ base, isOpen, onOpen, onDeleted }: { base: KnowledgeBase; isOpen: boolean; onOpen: (id: string) => void; onDeleted: (base: KnowledgeBase) => void }) {
  const client = useQueryClient();
  const remove = useMutation({
    mutationFn: () => api('DELETE', `/api/v1/knowledge/${encodeURIComponent(base.id)}`),
    onSuccess: async () => {
      onDeleted(base);
      await client.invalidateQueries({ queryKey: ['knowledge'] });
    },
  });
  return (
    <tr>
      <th scope="row">{base.title}</th>
      <td className="mono">{base.id}</td>
      <td className="number">{count(base.documents)}</td>
      <td className="number">{count(base.chunks)}</td>
      <td className="number">{count(base.characters)}</td>
      <td>{shortTime(base.createdAt)}</td>
      <td>
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
      </td>
    </tr>
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
      {documents.isPending ? <Loading what="documents" /> : null}
      <ErrorNote error={documents.error} what="Loading documents" />
      {documents.data && documents.data.data.length === 0 ? <p className="empty">No documents yet. Add one below: plain text or Markdown (cut at its headings).</p> : null}
      {documents.data && documents.data.data.length > 0 ? <DocumentsTable rows={documents.data.data} /> : null}
      <AddDocument base={base} />
      <button type="button" onClick={onClose}>
        Close {base.title}
      </button>
    </section>
  );
}

function DocumentsTable({ rows }: { rows: readonly KnowledgeDocument[] }) {
  return (
    <div className="table-scroll">
      <table>
        <caption>Documents, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Title</th>
            <th scope="col">Size (characters)</th>
            <th scope="col">Chunks</th>
            <th scope="col">Added (UTC)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((document) => (
            <tr key={document.id}>
              <th scope="row">{document.title}</th>
              <td className="number">{count(document.characters)}</td>
              <td className="number">{count(document.chunks)}</td>
              <td>{shortTime(document.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
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
        <label>
          Document title
          <input name="title" required maxLength={200} />
        </label>
        <label>
          Format
          <select name="format" defaultValue="text">
            <option value="text">Plain text</option>
            <option value="markdown">Markdown</option>
          </select>
        </label>
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
      <pre aria-label="curl example">{curl}</pre>
      <CopyButton text={curl} label="Copy curl command" />
    </div>
  );
}
