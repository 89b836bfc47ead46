import { useState, type ReactNode } from 'react';
import { usePagedList } from '../../api/paged-list.ts';
import { DataTable, type Column } from '../data-table.tsx';
import { FilterForm } from '../filter-form.tsx';
import { LabelledInput } from '../labelled-field.tsx';

export interface SearchListProps<Row extends { id: string }> {
  heading: string;
  /** The admin API's list (GET, `query` and cursor), 50 a page. */
  path: string;
  queryKey: readonly unknown[];
  /** The search form's name and its field's label. */
  searchLabel: string;
  fieldLabel: string;
  what: string;
  /** The table's caption and empty note, for the search made (undefined: none yet). */
  caption: (query: string | undefined) => string;
  empty: (query: string | undefined) => ReactNode;
  columns: ReadonlyArray<Column<Row>>;
}

/** An operator's directory page (users, organizations): a search by name or id over a list that pages by cursor. */
export function SearchList<Row extends { id: string }>({ heading, path, queryKey, searchLabel, fieldLabel, what, caption, empty, columns }: SearchListProps<Row>) {
  const [filters, setFilters] = useState<Record<string, string>>({});
  const { rows, pages } = usePagedList<Row>(queryKey, path, { limit: 50, ...filters });
  return (
    <>
      <h1>{heading}</h1>
      <FilterForm label={searchLabel} onApply={setFilters} submitLabel="Search">
        <LabelledInput label={fieldLabel} name="query" type="search" />
      </FilterForm>
      <DataTable caption={caption(filters.query)} what={what} empty={empty(filters.query)} rows={rows} rowKey={(row) => row.id} state={pages} more={pages} columns={columns} />
    </>
  );
}
