import type { RequestRow } from '../api/types.ts';
import { shortTime } from '../lib/dates.ts';

/** Request-log rows in a real table; `onDetails` adds a button per row that opens its detail view. */
export function RequestsTable({ rows, caption, onDetails }: { rows: readonly RequestRow[]; caption: string; onDetails?: (row: RequestRow) => void }) {
  return (
    <div className="table-scroll">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Endpoint</th>
            <th scope="col">Model</th>
            <th scope="col">Status</th>
            <th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th>
            <th scope="col">Cost</th>
            <th scope="col">Latency (ms)</th>
            {onDetails ? <th scope="col">Details</th> : null}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.id}>
              <td>{shortTime(row.created)}</td>
              <td>{row.endpoint}</td>
              <td>{row.model ?? '—'}</td>
              <td>{row.status}</td>
              <td className="number">{row.input_tokens}</td>
              <td className="number">{row.output_tokens}</td>
              <td className="number">{row.cost}</td>
              <td className="number">{row.latency_ms}</td>
              {onDetails ? (
                <td>
                  <button type="button" onClick={() => onDetails(row)} aria-label={`Details of request ${row.id}`}>
                    Details
                  </button>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
