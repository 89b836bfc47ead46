import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import type { AssistantCard, CatalogPage } from '../api/assistants.ts';
import { api, query } from '../api/client.ts';
import { DataTable, type Column } from './data-table.tsx';
import { LabelledInput, LabelledSelect } from './labelled-field.tsx';

/** SPEC 4.6's page size limit. */
const PAGE = 30;

type SortBy = 'popular' | 'newest';

const SORTS: ReadonlyArray<{ value: SortBy; label: string }> = [
  { value: 'popular', label: 'Most liked' },
  { value: 'newest', label: 'Newest' },
];

/** What an assistant costs to install (SPEC 2.6 `access`): its chats are charged per token on top, like any model call. */
export const installPriceText = (access: AssistantCard['access']): string => (access.isFree ? 'Free' : `${access.installPrice} to install`);

const COLUMNS: ReadonlyArray<Column<AssistantCard>> = [
  {
    header: 'Assistant',
    cell: (card) => (
      <>
        <Link to="/a/$mention" params={{ mention: card.mention }}>
          {card.title}
        </Link>
        <div className="muted mono">@{card.mention}</div>
      </>
    ),
    rowHeader: true,
  },
  {
    header: 'About',
    cell: (card) => (
      <>
        {card.subtitle ? <strong>{card.subtitle}</strong> : null}
        {card.description ? <div className="clamp">{card.description}</div> : null}
      </>
    ),
  },
  { header: 'Author', cell: (card) => card.owner.name },
  { header: 'Model', cell: (card) => <span className="mono">{card.modelId}</span> },
  { header: 'Price', cell: (card) => installPriceText(card.access) },
  { header: 'Likes', cell: (card) => card.likes, numeric: true },
];

/** "3 assistants for “lighthouse”, 1–30 shown". */
function captionOf(page: CatalogPage, query: string): string {
  const count = `${page.total} ${page.total === 1 ? 'assistant' : 'assistants'}`;
  const shown = page.total > page.data.length ? `, ${page.offset + 1}–${page.offset + page.data.length} shown` : '';
  return `${count}${query ? ` for “${query}”` : ''}${shown}`;
}

/**
 * The storefront's assistant catalog (DESIGN §11 `/`): SPEC 4.6's search for everyone, signed in or not. A search runs when
 * the form is sent, not on every keystroke: each may embed its query with a paid model.
 */
export function AssistantCatalog() {
  const [search, setSearch] = useState<{ query: string; sortBy: SortBy; offset: number }>({ query: '', sortBy: 'popular', offset: 0 });
  const found = useQuery({
    queryKey: ['assistant-catalog', search],
    queryFn: () => api<CatalogPage>('GET', `/api/v1/assistants/search${query({ query: search.query, sortBy: search.sortBy, limit: PAGE, offset: search.offset })}`),
    placeholderData: (previous) => previous,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setSearch({ query: String(form.get('query') ?? '').trim(), sortBy: form.get('sortBy') === 'newest' ? 'newest' : 'popular', offset: 0 });
  };
  const page = found.data;
  return (
    <section aria-labelledby="assistants" id="assistant-catalog">
      <h2 id="assistants">Assistants</h2>
      <p>Ready-made chat assistants on these models. Each has its own page; sign in to chat with one, charged per token like any model call.</p>
      <form role="search" aria-label="Assistants" className="row" onSubmit={submit}>
        <LabelledInput label="Find an assistant" type="search" name="query" maxLength={200} defaultValue={search.query} placeholder="a topic, a title or @code" />
        <LabelledSelect label="Sort by" name="sortBy" defaultValue={search.sortBy} choices={SORTS} />
        <button type="submit">Search assistants</button>
      </form>
      <p className="muted">A search matches titles and codes, and descriptions close in meaning; “@code” finds one assistant by its exact code.</p>
      <DataTable
        caption={page ? captionOf(page, search.query) : 'Assistants'}
        what="assistants"
        empty={search.query ? `No assistant matches “${search.query}”.` : 'No public assistants yet. Signed-in users publish theirs from the console’s Assistants page.'}
        rows={page?.data ?? []}
        rowKey={(card) => card.id}
        state={found}
        columns={COLUMNS}
      />
      {page && page.data.length > 0 ? (
        <div className="actions">
          <button type="button" disabled={search.offset === 0} onClick={() => setSearch({ ...search, offset: Math.max(0, search.offset - PAGE) })}>
            Previous assistants
          </button>
          <button type="button" disabled={page.offset + page.data.length >= page.total} onClick={() => setSearch({ ...search, offset: search.offset + PAGE })}>
            More assistants
          </button>
        </div>
      ) : null}
    </section>
  );
}
