import { Fragment, type ReactNode } from 'react';
import { ErrorNote, Loading } from './status.tsx';

export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
  /** The column that names the row: its cells are `<th scope="row">`. */
  rowHeader?: boolean;
  /** Right-aligned figures. */
  numeric?: boolean;
  /** The column's cell in a totals row under the rows (the row-header column's says what it is, such as "Total"). */
  total?: (rows: readonly Row[]) => ReactNode;
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

interface TableProps<Row> {
  caption: ReactNode;
  columns: ReadonlyArray<Column<Row>>;
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** What the rows are, for the loading and error notes ("users" → "Loading users…"). */
  what: string;
  state?: TableState;
  more?: MoreRows;
  /** The "Load more" button's name when a page has more than one list. */
  moreLabel?: string;
  /** Content under a row across the whole table (a row's edit form), or nothing. */
  rowDetails?: (row: Row) => ReactNode;
}

/**
 * What a loaded, empty list shows: `empty`, said in a row of the table; or `emptyInstead`, a fuller empty state that teaches
 * (how to make the first one, a ready call) shown in place of the table.
 */
type Emptiness = { empty: ReactNode; emptyInstead?: never } | { emptyInstead: ReactNode; empty?: never };

export type DataTableProps<Row> = TableProps<Row> & Emptiness;

/**
 * A real table with header cells whose body also carries its loading, error and empty states (so the table keeps its place
 * and caption while it loads), inside a box that scrolls sideways on narrow screens, with "Load more" for cursor lists.
 */
export function DataTable<Row>({ caption, columns, rows, rowKey, what, empty, emptyInstead, state, more, moreLabel = 'Load more', rowDetails }: DataTableProps<Row>) {
  const span = columns.length;
  const loaded = !state?.isPending && !state?.error;
  if (loaded && rows.length === 0 && emptyInstead !== undefined) return <>{emptyInstead}</>;
  const note = (content: ReactNode) => (
    <tr>
      <td colSpan={span}>{content}</td>
    </tr>
  );
  const numeric = (column: Column<Row>) => (column.numeric ? 'number' : undefined);
  const cellOf = (column: Column<Row>, content: ReactNode) =>
    column.rowHeader ? (
      <th key={column.header} scope="row">
        {content}
      </th>
    ) : (
      <td key={column.header} className={numeric(column)}>
        {content}
      </td>
    );
  return (
    <>
      <div className="table-scroll">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) => (
                <th key={column.header} scope="col" className={numeric(column)}>
                  {column.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => {
              const details = rowDetails?.(row);
              return (
                <Fragment key={rowKey(row)}>
                  <tr>
                    {columns.map((column) => cellOf(column, column.cell(row)))}
                  </tr>
                  {details ? note(details) : null}
                </Fragment>
              );
            })}
            {state?.isPending ? note(<Loading what={what} />) : null}
            {state?.error ? note(<ErrorNote error={state.error} what={`Loading ${what}`} />) : null}
            {loaded && rows.length === 0 ? note(<p className="empty">{empty}</p>) : null}
          </tbody>
          {rows.length > 0 && columns.some((column) => column.total) ? (
            <tfoot>
              <tr>
                {columns.map((column) => cellOf(column, column.total?.(rows)))}
              </tr>
            </tfoot>
          ) : null}
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
