import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../../api/client.ts';
import { usePagedList } from '../../api/paged-list.ts';
import type { Task, TaskDetails, TaskStatus } from '../../api/types.ts';
import { CodeExample } from '../../components/code-example.tsx';
import { DataTable } from '../../components/data-table.tsx';
import { Facts, type Fact } from '../../components/facts.tsx';
import { LabelledSelect } from '../../components/labelled-field.tsx';
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
  const { rows, pages } = usePagedList<Task>(['tasks'], '/api/v1/tasks', { limit: 50, status }, { refetchInterval: (loaded) => (loaded.some(unfinished) ? REFRESH_MS : false) });
  const statusLabel = STATUSES.find((option) => option.value === status)?.label.toLowerCase();
  return (
    <>
      <h1>Tasks</h1>
      <form className="row filters" aria-label="Task filters" onSubmit={(event) => event.preventDefault()}>
        <LabelledSelect
          label="Status"
          value={status}
          onChange={(event) => {
            setStatus(event.currentTarget.value as TaskStatus | '');
            setSelected(null);
          }}
          choices={STATUSES}
        />
      </form>
      {selected ? <TaskDetailsView id={selected} onClose={() => setSelected(null)} /> : null}
      <DataTable
        caption={`${rows.length === 1 ? '1 task' : `${rows.length} tasks`}, newest first`}
        what="tasks"
        {...(status ? { empty: `No tasks are ${statusLabel}.` } : { emptyInstead: <NoTasksYet /> })}
        rows={rows}
        rowKey={(task) => task.id}
        state={pages}
        more={pages}
        columns={[
          { header: 'Task', cell: (task) => <span className="mono">{task.id}</span>, rowHeader: true },
          { header: 'Kind', cell: (task) => (task.kind === 'imagine' && task.type !== 'imagine' ? `${KINDS[task.kind]} (${task.type})` : KINDS[task.kind]) },
          { header: 'Model', cell: (task) => task.model },
          { header: 'Status', cell: (task) => (task.status === 'processing' && task.percent > 0 ? `processing (${task.percent} %)` : task.status) },
          { header: 'Cost', cell: (task) => task.cost, numeric: true },
          { header: 'Created (UTC)', cell: (task) => shortTime(task.createdAt) },
          {
            header: 'Details',
            cell: (task) => (
              <button type="button" onClick={() => setSelected(task.id)} aria-label={`Details of task ${task.id}`}>
                Details
              </button>
            ),
          },
        ]}
      />
    </>
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
  const facts: Fact[] = [
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
    <Facts facts={facts} />
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
      <DataTable
        caption="Delivery attempts, oldest first"
        what="delivery attempts"
        emptyInstead={<p className="muted">{unfinished(task) ? 'Delivered when the task ends.' : 'No attempts yet.'}</p>}
        rows={task.deliveries}
        rowKey={(delivery) => delivery.id}
        columns={[
          { header: 'Attempt', cell: (delivery) => delivery.attempt, rowHeader: true },
          { header: 'Time (UTC)', cell: (delivery) => shortTime(delivery.at) },
          { header: 'Event', cell: (delivery) => delivery.event },
          { header: 'Outcome', cell: (delivery) => delivery.status },
          { header: 'Status code', cell: (delivery) => delivery.httpStatus ?? '—', numeric: true },
          { header: 'Error', cell: (delivery) => delivery.error ?? '—' },
          { header: 'Duration (ms)', cell: (delivery) => delivery.durationMs, numeric: true },
        ]}
      />
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

/** The empty state: a ready call that makes an image task, with this gateway's own address. */
function NoTasksYet() {
  const curl = `curl ${window.location.origin}/v1/imagegen/imagine \\\n  -H "Authorization: Bearer $TOLLGATE_KEY" \\\n  -H "content-type: application/json" \\\n  -d '{"prompt":"A lighthouse at dawn, watercolour"}'`;
  return (
    <div className="empty">
      <p>
        <strong>No tasks yet.</strong> Image and media tasks made with your API keys appear here with their results. Make one with a key from the API keys page:
      </p>
      <CodeExample code={curl} />
      <p className="muted">Add &quot;webhook_url&quot; to the body to have the finished task posted to your server; its deliveries show here too.</p>
    </div>
  );
}
