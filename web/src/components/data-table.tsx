import type { ReactNode } from 'react';
import { ErrorNote, Loading } from './status.tsx';

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
  /** The column that names the row: its cells are `<th scope="row">`. */
  rowHeader?: boolean;
  /** Right-aligned figures. */
  numeric?: boolean;
}

/** Where the rows come from: a query's pending and error state (a TanStack query fits as it is). */
export interface TableState {
  isPending: boolean;
  error: unknown;
}

/** The next page of a cursor list (a TanStack infinite query fits as it is). */
export interface MoreRows {
  hasNextPage: boolean;
  isFetchingNextPage: boolean;
  fetchNextPage: () => unknown;
}

export interface DataTableProps<Row> {
  caption: ReactNode;
  columns: ReadonlyArray<Column<Row>>;
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** What the rows are, for the loading and error notes ("users" → "Loading users…"). */
  what: string;
  /** Said in place of the rows when there are none. */
  empty: ReactNode;
  state?: TableState;
  more?: MoreRows;
  /** The "Load more" button's name when a page has more than one list. */
  moreLabel?: string;
}

/**
 * A real table with header cells whose body also carries its loading, error and empty states (so the table keeps its place
 * and caption while it loads), inside a box that scrolls sideways on narrow screens, with "Load more" for cursor lists.
 */
export function DataTable<Row>({ caption, columns, rows, rowKey, what, empty, state, more, moreLabel = 'Load more' }: DataTableProps<Row>) {
  const span = columns.length;
  const note = (content: ReactNode) => (
    <tr>
      <td colSpan={span}>{content}</td>
    </tr>
  );
  return (
    <>
      <div className="table-scroll">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column.header} scope="col" className={column.numeric ? 'number' : undefined}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)}>
                {columns.map((column) =>
                  column.rowHeader ? (
                    <th key={column.header} scope="row">
                      {column.cell(row)}
                    </th>
                  ) : (
                    <td key={column.header} className={column.numeric ? 'number' : undefined}>
                      {column.cell(row)}
                    </td>
                  ),
                )}
              </tr>
            ))}
            {state?.isPending ? note(<Loading what={what} />) : null}
            {state?.error ? note(<ErrorNote error={state.error} what={`Loading ${what}`} />) : null}
            {!state?.isPending && !state?.error && rows.length === 0 ? note(<p className="empty">{empty}</p>) : null}
          </tbody>
        </table>
      </div>
      {more?.hasNextPage ? (
        <button type="button" onClick={() => void more.fetchNextPage()} disabled={more.isFetchingNextPage}>
          {more.isFetchingNextPage ? 'Loading…' : moreLabel}
        </button>
      ) : null}
    </>
  );
}
