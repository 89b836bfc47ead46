import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client.ts';
import type { CatalogModel, List } from '../api/types.ts';
import { AssistantCatalog } from '../components/assistant-catalog.tsx';
import { SiteHeader } from '../components/site-header.tsx';
import { ErrorNote, Loading } from '../components/status.tsx';

function RetirementBadge({ model }: { model: CatalogModel }) {
  const analogue = model.deprecation_redirect_to ? `; use ${model.deprecation_redirect_to}` : '';
  if (model.deprecated) return <span className="badge retired">Retired {model.shutdown_date}{analogue}</span>;
  if (model.retiring) return <span className="badge retiring">Retires {model.shutdown_date}{analogue}</span>;
  return <span className="badge">Available</span>;
}

/** Prices of a model as the catalog sells it: per 1M tokens, or per request / per minute for media models. */
function priceCells(model: CatalogModel) {
  if (model.cost_request !== undefined) return [<td key="in" colSpan={2}>{model.cost_request} per request</td>];
  if (model.cost_minute !== undefined) return [<td key="in" colSpan={2}>{model.cost_minute} per minute</td>];
  return [<td key="in" className="number">{model.input_per_million}</td>, <td key="out" className="number">{model.output_per_million}</td>];
}

/** The storefront (DESIGN §11 `/`): the model catalog with prices and retirement badges, and the assistant catalog, for everyone. */
export function StorefrontPage() {
  const models = useQuery({ queryKey: ['catalog'], queryFn: () => api<List<CatalogModel>>('GET', '/api/v1/models') });
  const [filter, setFilter] = useState('');
  const shown = (models.data?.data ?? []).filter((model) => model.id.toLowerCase().includes(filter.trim().toLowerCase()));
  return (
    <div>
      <SiteHeader />
      <main id="main">
        <h1>Models and prices</h1>
        <p>
          One API key for every model below, through the OpenAI and Anthropic APIs. Prices are per 1,000,000 tokens unless noted.{' '}
          <a href="#assistant-catalog">Browse assistants</a> built on them.
        </p>
        <label className="inline">
          Find a model
          <input type="search" value={filter} onChange={(event) => setFilter(event.target.value)} />
        </label>
        {models.isPending ? <Loading what="the catalog" /> : null}
        <ErrorNote error={models.error} what="Loading the catalog" />
        {models.data ? (
          <div className="table-scroll">
            <table>
              <caption>{shown.length} models</caption>
              <thead>
                <tr>
                  <th scope="col">Model</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Input per 1M</th>
                  <th scope="col">Output per 1M</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((model) => (
                  <tr key={model.id}>
                    <th scope="row">{model.id}</th>
                    <td>{model.kind}</td>
                    {priceCells(model)}
                    <td>
                      <RetirementBadge model={model} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        <AssistantCatalog />
      </main>
    </div>
  );
}
