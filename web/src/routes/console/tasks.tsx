import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, query } from '../../api/client.ts';
import type { List, Task, TaskDelivery, TaskDetails, TaskStatus } from '../../api/types.ts';
import { CopyButton } from '../../components/copy-button.tsx';
import { ErrorNote, Loading } from '../../components/status.tsx';
import { shortTime } from '../../lib/dates.ts';

/** While a task runs or a delivery waits, its page asks again this often (tasks move on their own). */
const REFRESH_MS = 3_000;

const STATUSES: ReadonlyArray<{ value: TaskStatus | ''; label: string }> = [
  { value: '', label: 'All statuses' },
  { value: 'idle', label: 'Waiting (idle)' },
  { value: 'processing', label: 'Processing' },
  { value: 'done', label: 'Done' },
  { value: 'failed', label: 'Failed' },
];

const KINDS: Readonly<Record<Task['kind'], string>> = { imagine: 'Image', media: 'Media', transcription: 'Transcription' };

const unfinished = (task: Task): boolean => task.status === 'idle' || task.status === 'processing';

/** /console/tasks: the user's image, media and transcription tasks, newest first, by status; a detail view with results and webhook deliveries. */
export function TasksPage() {
  const [status, setStatus] = useState<TaskStatus | ''>('');
  const [selected, setSelected] = useState<string | null>(null);
  const pages = useInfiniteQuery({
    queryKey: ['tasks', status],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => api<List<Task>>('GET', `/api/v1/tasks${query({ limit: 50, cursor: pageParam, status })}`),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
    refetchInterval: (current) => (current.state.data?.pages.some((page) => page.data.some(unfinished)) ? REFRESH_MS : false),
  });
  const rows = pages.data?.pages.flatMap((page) => page.data) ?? [];
  return (
    <>
      <h1>Tasks</h1>
      <form className="row filters" aria-label="Task filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          Status
          <select
            value={status}
            onChange={(event) => {
              setStatus(event.currentTarget.value as TaskStatus | '');
              setSelected(null);
            }}
          >
            {STATUSES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </form>
      {selected ? <TaskDetailsView id={selected} onClose={() => setSelected(null)} /> : null}
      {pages.isPending ? <Loading what="tasks" /> : null}
      <ErrorNote error={pages.error} what="Loading tasks" />
      {pages.data && rows.length === 0 ? status ? <p className="empty">No tasks are {STATUSES.find((option) => option.value === status)?.label.toLowerCase()}.</p> : <NoTasksYet /> : null}
      {rows.length > 0 ? <TasksTable rows={rows} onDetails={setSelected} /> : null}
      {pages.hasNextPage ? (
        <button type="button" onClick={() => void pages.fetchNextPage()} disabled={pages.isFetchingNextPage}>
          Load more
        </button>
      ) : null}
    </>
  );
}

function TasksTable({ rows, onDetails }: { rows: readonly Task[]; onDetails: (id: string) => void }) {
  return (
    <div className="table-scroll">
      <table>
        <caption>{rows.length === 1 ? '1 task' : `${rows.length} tasks`}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Kind</th>
            <th scope="col">Model</th>
            <th scope="col">Status</th>
            <th scope="col">Cost</th>
            <th scope="col">Created (UTC)</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((task) => (
            <tr key={task.id}>
              <th scope="row" className="mono">
                {task.id}
              </th>
              <td>{task.kind === 'imagine' && task.type !== 'imagine' ? `${KINDS[task.kind]} (${task.type})` : KINDS[task.kind]}</td>
              <td>{task.model}</td>
              <td>{task.status === 'processing' && task.percent > 0 ? `processing (${task.percent} %)` : task.status}</td>
              <td className="number">{task.cost}</td>
              <td>{shortTime(task.createdAt)}</td>
              <td>
                <button type="button" onClick={() => onDetails(task.id)} aria-label={`Details of task ${task.id}`}>
                  Details
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function TaskDetailsView({ id, onClose }: { id: string; onClose: () => void }) {
  const task = useQuery({
    queryKey: ['task', id],
    queryFn: () => api<TaskDetails>('GET', `/api/v1/tasks/${encodeURIComponent(id)}`),
    refetchInterval: (current) => {
      const data = current.state.data;
      return data && (unfinished(data) || data.nextDelivery) ? REFRESH_MS : false;
    },
  });
  return (
    <section aria-labelledby="task-details" className="notice">
      <h2 id="task-details">Task {id}</h2>
      {task.isPending ? <Loading what="the task" /> : null}
      <ErrorNote error={task.error} what="Loading the task" />
      {task.data ? <TaskFacts task={task.data} /> : null}
      {task.data ? <TaskResult task={task.data} /> : null}
      {task.data ? <Deliveries task={task.data} /> : null}
      <button type="button" onClick={onClose}>
        Close details
      </button>
    </section>
  );
}

function TaskFacts({ task }: { task: TaskDetails }) {
  const facts: Array<[string, string]> = [
    ['Kind', `${KINDS[task.kind]} (${task.type})`],
    ['Model', task.servedModel === task.model ? task.model : `${task.model} (served by ${task.servedModel})`],
    ['Status', task.status],
    ['Progress', `${task.percent} %`],
    ['Cost', task.cost],
    ['Paid by', task.paidBy.type === 'org' ? `organisation ${task.paidBy.id}` : 'you'],
    ['Key', task.keyId],
    ['Created (UTC)', shortTime(task.createdAt)],
    ['Updated (UTC)', shortTime(task.updatedAt)],
  ];
  if (task.parentId) facts.push(['Parent task', task.parentId]);
  if (task.prompt !== null) facts.push(['Prompt', task.prompt]);
  return (
    <dl className="details">
      {facts.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The page loads a result image from this gateway whatever public URL the link names (the app's policy allows only its own origin). */
const ownPath = (url: string): string => {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
};

function TaskResult({ task }: { task: TaskDetails }) {
  if (task.error) {
    return (
      <>
        <h3>Result</h3>
        <p className="error">
          Failed ({task.error.code}): {task.error.message}
        </p>
      </>
    );
  }
  if (!task.result) {
    return (
      <>
        <h3>Result</h3>
        <p className="muted">{unfinished(task) ? 'Not ready yet: this page checks again every few seconds.' : 'No result.'}</p>
      </>
    );
  }
  const files = task.result.files;
  return (
    <>
      <h3>Result</h3>
      {task.result.text !== null ? <pre aria-label="Transcription">{task.result.text}</pre> : null}
      {files.length > 0 ? (
        <ul className="results">
          {files.map((file, index) => {
            const name = `${file.contentType.startsWith('image/') ? 'Image' : 'File'} ${index + 1} of ${files.length}`;
            return (
              <li key={file.url}>
                {file.contentType.startsWith('image/') ? <img src={ownPath(file.url)} alt={`Result image ${index + 1}`} loading="lazy" /> : null}
                <a href={file.url} target="_blank" rel="noreferrer">
                  {name}
                </a>{' '}
                <span className="muted">({file.contentType})</span>
              </li>
            );
          })}
        </ul>
      ) : null}
    </>
  );
}

function Deliveries({ task }: { task: TaskDetails }) {
  if (!task.webhookUrl) {
    return (
      <>
        <h3>Webhook deliveries</h3>
        <p className="muted">This task was created without a webhook_url, so it is not delivered anywhere.</p>
      </>
    );
  }
  return (
    <>
      <h3>Webhook deliveries</h3>
      <p>
        To <span className="mono">{task.webhookUrl}</span>
      </p>
      {task.deliveries.length === 0 ? <p className="muted">{unfinished(task) ? 'Delivered when the task ends.' : 'No attempts yet.'}</p> : <DeliveriesTable rows={task.deliveries} />}
      <p role="status">{nextDeliveryText(task)}</p>
    </>
  );
}

function nextDeliveryText(task: TaskDetails): string {
  if (task.nextDelivery?.running) return 'Delivering now.';
  if (task.nextDelivery) return `Next attempt at ${shortTime(task.nextDelivery.at)} UTC.`;
  if (task.deliveries.some((delivery) => delivery.status === 'delivered')) return 'Delivered; no further attempts.';
  if (task.deliveries.length > 0) return 'Failed for good: no further attempts are queued.';
  return '';
}

function DeliveriesTable({ rows }: { rows: readonly TaskDelivery[] }) {
  return (
    <div className="table-scroll">
      <table>
        <caption>Delivery attempts, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Event</th>
            <th scope="col">Outcome</th>
            <th scope="col">Status code</th>
            <th scope="col">Error</th>
            <th scope="col">Duration (ms)</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((delivery) => (
            <tr key={delivery.id}>
              <th scope="row">{delivery.attempt}</th>
              <td>{shortTime(delivery.at)}</td>
              <td>{delivery.event}</td>
              <td>{delivery.status}</td>
              <td className="number">{delivery.httpStatus ?? '—'}</td>
              <td>{delivery.error ?? '—'}</td>
              <td className="number">{delivery.durationMs}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The empty state: a ready call that makes an image task, with this gateway's own address. */
function NoTasksYet() {
  const curl = `curl ${window.location.origin}/v1/imagegen/imagine \\\n  -H "Authorization: Bearer $TOLLGATE_KEY" \\\n  -H "content-type: application/json" \\\n  -d '{"prompt":"A lighthouse at dawn, watercolour"}'`;
  return (
    <div className="empty">
      <p>
        <strong>No tasks yet.</strong> Image and media tasks made with your API keys appear here with their results. Make one with a key from the API keys page:
      </p>
      <pre aria-label="curl example">{curl}</pre>
      <CopyButton text={curl} label="Copy curl command" />
      <p className="muted">Add &quot;webhook_url&quot; to the body to have the finished task posted to your server; its deliveries show here too.</p>
    </div>
  );
}
