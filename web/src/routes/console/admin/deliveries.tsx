import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { AdminDelivery, DeliveryRetry, DeliveryState } from '../../../api/admin-types.ts';
import { api } from '../../../api/client.ts';
import { usePagedList } from '../../../api/paged-list.ts';
import { DataTable } from '../../../components/data-table.tsx';
import { FilterForm } from '../../../components/filter-form.tsx';
import { LabelledSelect } from '../../../components/labelled-field.tsx';
import { ErrorNote } from '../../../components/status.tsx';
import { shortTime } from '../../../lib/dates.ts';

const SHOWN: ReadonlyArray<{ value: DeliveryState | ''; label: string; caption: string }> = [
  { value: 'failed', label: 'Failed for good', caption: 'Webhooks that failed for good (every automatic retry used), newest first' },
  { value: 'pending', label: 'Retrying', caption: 'Webhooks with a delivery queued or running, newest first' },
  { value: 'delivered', label: 'Delivered', caption: 'Delivered webhooks, newest first' },
  { value: '', label: 'All', caption: 'Every task webhook, newest first' },
];

const STATE_WORDS: Record<DeliveryState, string> = { failed: 'failed for good', pending: 'retrying', delivered: 'delivered' };

/**
 * /console/admin/deliveries: task webhooks by where they stand (each task's latest attempt); a webhook that failed for good
 * is sent again on the operator's word (then the usual automatic retries), signed afresh with the creating key.
 */
export function AdminDeliveriesPage() {
  const [state, setState] = useState<DeliveryState | ''>('failed');
  const [queued, setQueued] = useState<DeliveryRetry | null>(null);
  const { rows, pages } = usePagedList<AdminDelivery>(['admin', 'deliveries'], '/admin/v1/deliveries', { limit: 50, state });
  const shown = SHOWN.find((choice) => choice.value === state) ?? SHOWN[0]!;
  return (
    <>
      <h1>Webhook deliveries</h1>
      <p className="muted">
        A task with a webhook URL reports to it when it finishes; a failed attempt is retried after about 5 s, 20 s, 60 s and 180 s. Each row is a task's latest attempt.
      </p>
      <FilterForm label="Choose deliveries" onApply={(values) => setState((values.state ?? '') as DeliveryState | '')} submitLabel="Show">
        <LabelledSelect label="Webhooks" name="state" defaultValue={state} choices={SHOWN} />
      </FilterForm>
      {queued ? (
        <p role="status" className="notice">
          The webhook of task {queued.taskId} is queued again ({shortTime(queued.runAt)} UTC); it shows under “Retrying” until it is delivered or fails for good.
        </p>
      ) : null}
      <DataTable
        caption={shown.caption}
        what="deliveries"
        empty={state === 'failed' ? 'No webhook has failed for good.' : 'No deliveries here.'}
        rows={rows}
        rowKey={(delivery) => delivery.id}
        state={pages}
        more={pages}
        columns={[
          { header: 'Task', cell: (delivery) => <span className="mono">{delivery.taskId}</span>, rowHeader: true },
          { header: 'State', cell: (delivery) => STATE_WORDS[delivery.state] },
          { header: 'Attempt', cell: (delivery) => delivery.attempt, numeric: true },
          { header: 'Last attempt (UTC)', cell: (delivery) => shortTime(delivery.at) },
          { header: 'Answer', cell: (delivery) => (delivery.httpStatus !== null ? `HTTP ${delivery.httpStatus}` : (delivery.error ?? '—')) },
          { header: 'Event', cell: (delivery) => delivery.event },
          { header: 'URL', cell: (delivery) => <span className="mono break">{delivery.url}</span> },
          { header: 'Actions', cell: (delivery) => (delivery.state === 'failed' ? <RetryDelivery delivery={delivery} onQueued={setQueued} /> : null) },
        ]}
      />
    </>
  );
}

function RetryDelivery({ delivery, onQueued }: { delivery: AdminDelivery; onQueued: (retry: DeliveryRetry) => void }) {
  const client = useQueryClient();
  const retry = useMutation({
    mutationFn: () => api<DeliveryRetry>('POST', `/admin/v1/deliveries/${encodeURIComponent(delivery.id)}/retry`),
    onSuccess: (queued) => {
      onQueued(queued);
      return client.invalidateQueries({ queryKey: ['admin', 'deliveries'] });
    },
  });
  return (
    <>
      <button type="button" onClick={() => retry.mutate()} disabled={retry.isPending || retry.isSuccess} aria-label={`Retry the webhook of task ${delivery.taskId}`}>
        Retry
      </button>
      <ErrorNote error={retry.error} what="Retry refused" />
    </>
  );
}
