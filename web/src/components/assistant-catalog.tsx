import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { useState, type FormEvent } from 'react';
import type { AssistantCard, CatalogPage } from '../api/assistants.ts';
import { api, query } from '../api/client.ts';
import { ErrorNote, Loading } from './status.tsx';

/** SPEC 4.6's page size limit. */
const PAGE = 30;

type SortBy = 'popular' | 'newest';

/** What an assistant costs to install (SPEC 2.6 `access`): its chats are charged per token on top, like any model call. */
export const installPriceText = (access: AssistantCard['access']): string => (access.isFree ? 'Free' : `${access.installPrice} to install`);

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
        <label>
          Find an assistant
          <input type="search" name="query" maxLength={200} defaultValue={search.query} placeholder="a topic, a title or @code" />
        </label>
        <label>
          Sort by
          <select name="sortBy" defaultValue={search.sortBy}>
            <option value="popular">Most liked</option>
            <option value="newest">Newest</option>
          </select>
        </label>
        <button type="submit">Search assistants</button>
      </form>
      <p className="muted">A search matches titles and codes, and descriptions close in meaning; “@code” finds one assistant by its exact code.</p>
      {found.isPending ? <Loading what="assistants" /> : null}
      <ErrorNote error={found.error} what="Searching assistants" />
      {page && page.total === 0 ? (
        <p className="empty">{search.query ? `No assistant matches “${search.query}”.` : 'No public assistants yet. Signed-in users publish theirs from the console’s Assistants page.'}</p>
      ) : null}
      {page && page.data.length > 0 ? (
        <>
          <div className="table-scroll">
            <table>
              <caption>
                {page.total} {page.total === 1 ? 'assistant' : 'assistants'}
                {search.query ? ` for “${search.query}”` : ''}
                {page.total > page.data.length ? `, ${page.offset + 1}–${page.offset + page.data.length} shown` : ''}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Assistant</th>
                  <th scope="col">About</th>
                  <th scope="col">Author</th>
                  <th scope="col">Model</th>
                  <th scope="col">Price</th>
                  <th scope="col">Likes</th>
                </tr>
              </thead>
              <tbody>
                {page.data.map((card) => (
                  <tr key={card.id}>
                    <th scope="row">
                      <Link to="/a/$mention" params={{ mention: card.mention }}>
                        {card.title}
                      </Link>
                      <div className="muted mono">@{card.mention}</div>
                    </th>
                    <td>
                      {card.subtitle ? <strong>{card.subtitle}</strong> : null}
                      {card.description ? <div className="clamp">{card.description}</div> : null}
                    </td>
                    <td>{card.owner.name}</td>
                    <td className="mono">{card.modelId}</td>
                    <td>{installPriceText(card.access)}</td>
                    <td className="number">{card.likes}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="actions">
            <button type="button" disabled={search.offset === 0} onClick={() => setSearch({ ...search, offset: Math.max(0, search.offset - PAGE) })}>
              Previous assistants
            </button>
            <button type="button" disabled={page.offset + page.data.length >= page.total} onClick={() => setSearch({ ...search, offset: search.offset + PAGE })}>
              More assistants
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
