import { sql, type ExpressionBuilder, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { JsonObject } from '../core/chat-types.ts';
import type { LedgerEntry } from '../features/billing/ledger.ts';
import type { CostAdjustment } from '../features/usage/request-log.ts';
import {
  taskMovesTo,
  type LatestDeliveriesQuery,
  type LatestDelivery,
  type QueuedDelivery,
  type Task,
  type TaskChanges,
  type TaskDelivery,
  type TaskError,
  type TaskFile,
  type TaskListFilter,
  type TaskResult,
  type TasksRepository,
} from '../features/tasks/task.ts';
import type { SqlJobsRepository } from './jobs-repository.ts';
import type { SqlLedgerRepository } from './ledger-repository.ts';
import { decodeIdCursor, pageOf } from './list-pages.ts';
import { moneyText } from './money-sql.ts';
import { adjustUsage } from './request-log-repository.ts';
import type { Database, DeliveriesTable, TasksTable } from './schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

const COLUMNS = [
  'id', 'kind', 'type', 'parent_id', 'user_id', 'key_id', 'payer_type', 'payer_id', 'model', 'served_model', 'status', 'percent',
  'input', 'result', 'error', 'webhook_url', 'webhook_secret', 'created_at', 'updated_at',
] as const;

const toTask = (row: Omit<Selectable<TasksTable>, 'cost_nano'> & { cost: string }): Task => ({
  id: row.id,
  kind: row.kind as Task['kind'],
  type: row.type,
  parentId: row.parent_id,
  userId: row.user_id,
  keyId: row.key_id,
  payer: { type: row.payer_type, id: row.payer_id },
  model: row.model,
  servedModel: row.served_model,
  status: row.status,
  percent: row.percent,
  input: JSON.parse(row.input) as JsonObject,
  result: row.result === null ? null : (JSON.parse(row.result) as TaskResult),
  error: row.error === null ? null : (JSON.parse(row.error) as TaskError),
  cost: BigInt(row.cost),
  webhookUrl: row.webhook_url,
  webhookSecret: row.webhook_secret,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Tasks, their stored result files and webhook delivery attempts. */
export class SqlTasksRepository implements TasksRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly ledger: SqlLedgerRepository,
    private readonly jobs: SqlJobsRepository,
  ) {}

  /** A new task, its charge and the job that will run it, in one transaction: none exists without the others. */
  async createWithCharge(task: Task, charge: LedgerEntry | null, now: number, files: Array<TaskFile & { data: Buffer }> = []): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.insert(trx, task);
      for (const file of files) await this.insertFile(trx, { ...file, taskId: task.id }, now);
      if (charge) await this.ledger.append([charge], trx);
      await this.jobs.enqueue(trx, { kind: 'task.run', subjectId: task.id, runAt: now }, now);
    });
  }

  /**
   * Settles a task: its new state, a refund when it failed, and its webhook job when it has a webhook URL —
   * committed together, so a finished task always has its delivery queued and a failed one its refund. False, and
   * nothing written, when the task may not move to the new status (it was settled already: no second refund).
   */
  async settle(taskId: string, changes: TaskChanges, options: { refund?: LedgerEntry; usage?: CostAdjustment; webhookAt?: number }, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Writing the task's row first also locks it: the request-log writer takes that lock before applying what waits.
      if (!(await this.updateWith(trx, taskId, changes, now))) return false;
      // `refund` is any correction of the task's charge: a refund (positive) or a further charge (negative); `usage` moves
      // the rollups with it, so /usage and the ledger change together or not at all.
      if (options.refund) await this.ledger.append([options.refund], trx);
      if (options.refund && options.usage) await adjustUsage(trx, options.usage);
      if (options.webhookAt !== undefined) await this.jobs.enqueue(trx, { kind: 'webhook.task', subjectId: taskId, runAt: options.webhookAt }, now);
      return true;
    });
  }

  private async insert(executor: Executor, task: Task): Promise<void> {
    await executor
      .insertInto('tasks')
      .values({
        id: task.id,
        kind: task.kind,
        type: task.type,
        parent_id: task.parentId,
        user_id: task.userId,
        key_id: task.keyId,
        payer_type: task.payer.type,
        payer_id: task.payer.id,
        model: task.model,
        served_model: task.servedModel,
        status: task.status,
        percent: task.percent,
        input: JSON.stringify(task.input),
        result: task.result === null ? null : JSON.stringify(task.result),
        error: task.error === null ? null : JSON.stringify(task.error),
        cost_nano: task.cost,
        webhook_url: task.webhookUrl,
        webhook_secret: task.webhookSecret,
        created_at: task.createdAt,
        updated_at: task.updatedAt,
      })
      .execute();
  }

  async get(id: string): Promise<Task | undefined> {
    const row = await this.db.selectFrom('tasks').select([...COLUMNS, moneyText('cost_nano').as('cost')]).where('id', '=', id).executeTakeFirst();
    return row && toTask(row);
  }

  /** Changes a task; a status change is written only from a status allowed to move to it (false when refused). */
  async update(id: string, changes: TaskChanges, now: number): Promise<boolean> {
    return this.updateWith(this.db, id, changes, now);
  }

  private async updateWith(executor: Executor, id: string, changes: TaskChanges, now: number): Promise<boolean> {
    let query = executor
      .updateTable('tasks')
      .set({
        ...(changes.status !== undefined ? { status: changes.status } : {}),
        ...(changes.percent !== undefined ? { percent: changes.percent } : {}),
        ...(changes.result !== undefined ? { result: changes.result === null ? null : JSON.stringify(changes.result) } : {}),
        ...(changes.error !== undefined ? { error: changes.error === null ? null : JSON.stringify(changes.error) } : {}),
        ...(changes.webhookSecret !== undefined ? { webhook_secret: changes.webhookSecret } : {}),
        ...(changes.cost !== undefined ? { cost_nano: changes.cost } : {}),
        updated_at: now,
      })
      .where('id', '=', id);
    if (changes.status !== undefined) query = query.where('status', 'in', taskMovesTo(changes.status));
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async saveFile(file: TaskFile & { taskId: string; data: Buffer }, now: number): Promise<void> {
    await this.insertFile(this.db, file, now);
  }

  private async insertFile(executor: Executor, file: TaskFile & { taskId: string; data: Buffer }, now: number): Promise<void> {
    await executor
      .insertInto('files')
      .values({ id: file.id, task_id: file.taskId, content_type: file.contentType, data: file.data.toString('base64'), created_at: now })
      .execute();
  }

  async file(id: string): Promise<{ contentType: string; data: Buffer } | undefined> {
    const row = await this.db.selectFrom('files').select(['content_type', 'data']).where('id', '=', id).executeTakeFirst();
    return row && { contentType: row.content_type, data: Buffer.from(row.data, 'base64') };
  }

  async recordDelivery(delivery: TaskDelivery): Promise<void> {
    await this.db
      .insertInto('deliveries')
      .values({
        id: delivery.id,
        task_id: delivery.taskId,
        attempt: delivery.attempt,
        url: delivery.url,
        event: delivery.event,
        status: delivery.status,
        http_status: delivery.httpStatus,
        error: delivery.error,
        duration_ms: delivery.durationMs,
        at: delivery.at,
      })
      .execute();
  }

  async listForUser(userId: string, filter: TaskListFilter): Promise<Task[]> {
    let select = this.db.selectFrom('tasks').select([...COLUMNS, moneyText('cost_nano').as('cost')]).where('user_id', '=', userId);
    if (filter.status !== undefined) select = select.where('status', '=', filter.status);
    if (filter.after !== undefined) select = select.where('id', '<', filter.after);
    const rows = await select.orderBy('id', 'desc').limit(filter.limit).execute();
    return rows.map(toTask);
  }

  async queuedDelivery(taskId: string): Promise<QueuedDelivery | undefined> {
    const row = await this.db
      .selectFrom('jobs')
      .select(['status', 'run_at'])
      .where('subject_id', '=', taskId)
      .where('kind', '=', 'webhook.task')
      .where('status', 'in', ['pending', 'running'])
      .orderBy('run_at')
      .executeTakeFirst();
    return row && { runAt: Number(row.run_at), running: row.status === 'running' };
  }

  async deliveries(taskId: string): Promise<TaskDelivery[]> {
    const rows = await this.db.selectFrom('deliveries').selectAll().where('task_id', '=', taskId).orderBy('at').orderBy('attempt').execute();
    return rows.map(toDelivery);
  }

  async delivery(id: string): Promise<TaskDelivery | undefined> {
    const row = await this.db.selectFrom('deliveries').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toDelivery(row);
  }

  async requeueWebhook(taskId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // Writing the task's row locks it (PostgreSQL row lock, SQLite's one writer): concurrent retries take turns here.
      await trx.updateTable('tasks').set({ updated_at: sql<number>`updated_at` }).where('id', '=', taskId).execute();
      const queued = await trx
        .selectFrom('jobs')
        .select('id')
        .where('kind', '=', 'webhook.task')
        .where('subject_id', '=', taskId)
        .where('status', 'in', ['pending', 'running'])
        .executeTakeFirst();
      if (queued) return false;
      await this.jobs.enqueue(trx, { kind: 'webhook.task', subjectId: taskId, runAt: now }, now);
      return true;
    });
  }

  async latestDeliveries(query: LatestDeliveriesQuery): Promise<{ deliveries: LatestDelivery[]; nextCursor: string | undefined }> {
    let select = this.db
      .selectFrom('deliveries')
      .selectAll('deliveries')
      .select((eb) => webhookQueued(eb).as('queued'))
      // Only each task's latest attempt: attempts number on, an operator's retry included.
      .where((eb) =>
        eb.not(eb.exists(eb.selectFrom('deliveries as later').select('later.id').whereRef('later.task_id', '=', 'deliveries.task_id').whereRef('later.attempt', '>', 'deliveries.attempt'))),
      );
    if (query.state === 'pending') select = select.where((eb) => webhookQueued(eb));
    else if (query.state !== undefined) select = select.where('deliveries.status', '=', query.state).where((eb) => eb.not(webhookQueued(eb)));
    const after = query.cursor === undefined ? undefined : decodeIdCursor(query.cursor);
    if (after) select = select.where('deliveries.id', '<', after);
    const rows = await select.orderBy('deliveries.id', 'desc').limit(query.limit + 1).execute();
    const page = pageOf(rows, query.limit);
    return {
      // SQLite answers EXISTS with 0 or 1, PostgreSQL with a boolean.
      deliveries: page.rows.map((row) => ({ ...toDelivery(row), state: Boolean(row.queued) ? 'pending' : row.status === 'delivered' ? 'delivered' : 'failed' })),
      nextCursor: page.nextCursor,
    };
  }
}

/** A delivery job of the row's task is queued or running (an automatic retry, or the operator's). */
const webhookQueued = (eb: ExpressionBuilder<Database, 'deliveries'>) =>
  eb.exists(
    eb
      .selectFrom('jobs')
      .select('jobs.id')
      .where('jobs.kind', '=', 'webhook.task')
      .whereRef('jobs.subject_id', '=', 'deliveries.task_id')
      .where('jobs.status', 'in', ['pending', 'running']),
  );

const toDelivery = (row: Selectable<DeliveriesTable>): TaskDelivery => ({
  id: row.id,
  taskId: row.task_id,
  attempt: row.attempt,
  url: row.url,
  event: row.event,
  status: row.status as TaskDelivery['status'],
  httpStatus: row.http_status,
  error: row.error,
  durationMs: row.duration_ms,
  at: Number(row.at),
});
