import type { ReactNode } from 'react';
import type { RequestRow } from '../api/types.ts';
import { shortTime } from '../lib/dates.ts';
import { DataTable, type Column, type DataTableProps } from './data-table.tsx';

const COLUMNS: ReadonlyArray<Column<RequestRow>> = [
  { header: 'Time (UTC)', cell: (row) => shortTime(row.created) },
  { header: 'Endpoint', cell: (row) => row.endpoint },
  { header: 'Model', cell: (row) => row.model ?? '—' },
  { header: 'Status', cell: (row) => row.status },
  { header: 'Input tokens', cell: (row) => row.input_tokens, numeric: true },
  { header: 'Output tokens', cell: (row) => row.output_tokens, numeric: true },
  { header: 'Cost', cell: (row) => row.cost, numeric: true },
  { header: 'Latency (ms)', cell: (row) => row.latency_ms, numeric: true },
];

type Props = Pick<DataTableProps<RequestRow>, 'rows' | 'caption' | 'state' | 'more'> & { empty: ReactNode; onDetails?: (row: RequestRow) => void };

/** Request-log rows in a real table; `onDetails` adds a button per row that opens its detail view. */
export function RequestsTable({ onDetails, ...table }: Props) {
  const details: Column<RequestRow> = {
    header: 'Details',
    cell: (row) => (
      <button type="button" onClick={() => onDetails?.(row)} aria-label={`Details of request ${row.id}`}>
        Details
      </button>
    ),
  };
  return <DataTable {...table} what="requests" rowKey={(row) => row.id} columns={onDetails ? [...COLUMNS, details] : COLUMNS} />;
}
