import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { FileUrl } from '../../../features/tasks/task-views.ts';
import { TASK_STATUSES, type QueuedDelivery, type Task, type TaskDelivery } from '../../../features/tasks/task.ts';
import type { TasksService } from '../../../features/tasks/tasks-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import { decodeIdCursor, pageOf } from '../../../storage/id-cursor.ts';
import { iso, pageQuery } from './actor.ts';
import { principalCaller } from './principal-caller.ts';

const listQuery = pageQuery.extend({ status: z.enum(TASK_STATUSES).optional() });
const taskParams = z.object({ id: z.string().min(1).max(200) });

/** A task as its owner manages it: every kind in one shape; money as decimal text; result files at the gateway's own URLs. */
const taskView = (task: Task, fileUrl: FileUrl) => ({
  id: task.id,
  object: 'task' as const,
  kind: task.kind,
  type: task.type,
  parentId: task.parentId,
  model: task.model,
  servedModel: task.servedModel,
  status: task.status,
  percent: task.percent,
  prompt: typeof task.input.prompt === 'string' ? task.input.prompt : null,
  cost: formatMoney(task.cost),
  paidBy: task.payer,
  keyId: task.keyId,
  result:
    task.status === 'done' && task.result
      ? { files: task.result.files.map((file) => ({ url: fileUrl(file.id), contentType: file.contentType })), text: task.result.text ?? null }
      : null,
  error: task.error,
  webhookUrl: task.webhookUrl,
  createdAt: iso(task.createdAt),
  updatedAt: iso(task.updatedAt),
});

const deliveryView = (delivery: TaskDelivery) => ({
  id: delivery.id,
  object: 'delivery' as const,
  attempt: delivery.attempt,
  event: delivery.event,
  url: delivery.url,
  status: delivery.status,
  httpStatus: delivery.httpStatus,
  error: delivery.error,
  durationMs: delivery.durationMs,
  at: iso(delivery.at),
});

const queuedView = (queued: QueuedDelivery | undefined) => (queued ? { at: iso(queued.runAt), running: queued.running } : null);

/**
 * GET /api/v1/tasks and GET /api/v1/tasks/:id: the signed-in user's image, media and transcription tasks — the tasks their
 * keys see through SPEC's task endpoints — and a task's webhook deliveries with the next attempt, if one is queued.
 */
export function registerTaskManagementRoutes(app: FastifyInstance, tasks: TasksService, fileUrl: FileUrl): void {
  app.get('/api/v1/tasks', { config: { auth: 'user', name: 'tasks.list', doc: { summary: 'Your image, media and transcription tasks, newest first', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const rows = await tasks.list(principalCaller(request), { status: query.status, limit: query.limit + 1, after: decodeIdCursor(query.cursor) });
    const page = pageOf(rows, query.limit);
    return { object: 'list', data: page.items.map((task) => taskView(task, fileUrl)), next_cursor: page.nextCursor };
  });

  app.get('/api/v1/tasks/:id', { config: { auth: 'user', name: 'tasks.get', doc: { summary: 'One of your tasks with its webhook deliveries', params: taskParams } } }, async (request) => {
    const params = parseOrThrow(taskParams, request.params);
    const { task, deliveries, queued } = await tasks.withDeliveries(principalCaller(request), params.id);
    return { ...taskView(task, fileUrl), deliveries: deliveries.map(deliveryView), nextDelivery: queuedView(queued) };
  });
}
