import type { JsonObject } from '../../core/chat-types.ts';
import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import type { CostAdjustment } from '../usage/request-log.ts';

/** `imagine`: image task of SPEC 4.7 (and its follow-up actions); `media`: SPEC 4.10 media task; `transcription`: asynchronous transcription. */
export type TaskKind = 'imagine' | 'media' | 'transcription';
/** DESIGN §5: idle → processing → done | failed. */
export const TASK_STATUSES = ['idle', 'processing', 'done', 'failed'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface TaskFile {
  id: string;
  contentType: string;
}

export interface TaskResult {
  files: TaskFile[];
  /** Transcription text. */
  text?: string;
  /** Vendor-side job id while a long generation (video) runs. */
  vendorId?: string;
  /** The channel whose vendor account holds `vendorId` (polls go there). */
  vendorChannel?: string;
  /** Vendor polls made so far. */
  polls?: number;
}

export interface TaskError {
  code: string;
  message: string;
}

export interface Task {
  id: string;
  kind: TaskKind;
  type: string;
  parentId: string | null;
  userId: string;
  keyId: string;
  payer: AccountRef;
  /** The model asked for (billing follows it). */
  model: string;
  /** The model that serves (differs after a retirement redirect). */
  servedModel: string;
  status: TaskStatus;
  percent: number;
  input: JsonObject;
  result: TaskResult | null;
  error: TaskError | null;
  cost: Money;
  webhookUrl: string | null;
  /**
   * The creating key, sealed; null once the webhook is delivered or the receiver answered 410 Gone. A delivery that failed for
   * good keeps it, so the operator may retry it (POST /admin/v1/deliveries/:id/retry).
   */
  webhookSecret: string | null;
  createdAt: number;
  updatedAt: number;
}

export const IMAGE_ACTIONS = ['upscale_1', 'upscale_2', 'upscale_3', 'upscale_4', 'variation_1', 'variation_2', 'variation_3', 'variation_4', 'reroll'] as const;
export type ImageAction = (typeof IMAGE_ACTIONS)[number];

export const isFinished = (task: Task): boolean => task.status === 'done' || task.status === 'failed';

const TASK_TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  // A task may fail before it starts (its model left the catalog).
  idle: ['processing', 'failed'],
  processing: ['done', 'failed'],
  // Finished is final: a settled task is never run, charged or refunded again.
  done: [],
  failed: [],
};

/** DESIGN §5's transitions: the statuses from which a task may move to `status` (the repository writes only these). */
export const taskMovesTo = (status: TaskStatus): TaskStatus[] =>
  (Object.keys(TASK_TRANSITIONS) as TaskStatus[]).filter((from) => TASK_TRANSITIONS[from].includes(status));

/** Fields of a task that change after it is created. */
export type TaskChanges = Partial<Pick<Task, 'status' | 'percent' | 'result' | 'error' | 'webhookSecret' | 'cost'>>;

/** One attempt to deliver a task's webhook (admin API: GET /deliveries?taskId=). */
export interface TaskDelivery {
  id: string;
  taskId: string;
  attempt: number;
  url: string;
  event: string;
  status: 'delivered' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  /** Unix milliseconds the attempt started. */
  at: number;
}

/**
 * Where a task's webhook stands, read from its latest attempt: `pending` while a delivery job is queued or running (the
 * automatic retries, or an operator's retry), `failed` when the latest attempt failed and nothing is queued (failed for good:
 * the operator may retry it), `delivered` when the latest attempt arrived.
 */
export const DELIVERY_STATES = ['pending', 'failed', 'delivered'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A task's latest delivery attempt with the state of its webhook (the operator's list of deliveries). */
export interface LatestDelivery extends TaskDelivery {
  state: DeliveryState;
}

export interface LatestDeliveriesQuery {
  state?: DeliveryState;
  limit: number;
  /** From the previous page's `nextCursor`. */
  cursor?: string;
}

/** Which of a user's tasks a list shows: newest first by id (ids sort by creation), `limit` of them after the id `after`. */
export interface TaskListFilter {
  status?: TaskStatus | undefined;
  limit: number;
  after?: string | undefined;
}

/** The delivery of a task's webhook that is queued: when it runs (a retry's time after a failure), or runs now. */
export interface QueuedDelivery {
  /** Unix milliseconds. */
  runAt: number;
  running: boolean;
}

/** Tasks, their stored files and webhook deliveries; storage/tasks-repository.ts implements it. Each method is its own transaction. */
export interface TasksRepository {
  /** A new task, its charge and the job that will run it, at once: none exists without the others. */
  createWithCharge(task: Task, charge: LedgerEntry | null, now: number, files?: Array<TaskFile & { data: Buffer }>): Promise<void>;
  /**
   * Settles a task: its new state, a correction of its charge (`refund`: positive refunds, negative charges more), and its
   * webhook job when `webhookAt` is given — at once, so a finished task always has its delivery queued and a failed one its refund.
   * `usage` (with a refund, when the request log is on) moves the usage rollups in the same transaction (CostAdjustment).
   */
  settle(taskId: string, changes: TaskChanges, options: { refund?: LedgerEntry; usage?: CostAdjustment; webhookAt?: number }, now: number): Promise<boolean>;
  get(id: string): Promise<Task | undefined>;
  update(id: string, changes: TaskChanges, now: number): Promise<boolean>;
  saveFile(file: TaskFile & { taskId: string; data: Buffer }, now: number): Promise<void>;
  file(id: string): Promise<{ contentType: string; data: Buffer } | undefined>;
  recordDelivery(delivery: TaskDelivery): Promise<void>;
  /** A user's tasks, newest first (`filter`: status, page). */
  listForUser(userId: string, filter: TaskListFilter): Promise<Task[]>;
  /** A task's delivery attempts, oldest first. */
  deliveries(taskId: string): Promise<TaskDelivery[]>;
  /** The webhook delivery of the task that is queued or running, if any (the next attempt after a failure). */
  queuedDelivery(taskId: string): Promise<QueuedDelivery | undefined>;
  delivery(id: string): Promise<TaskDelivery | undefined>;
  /**
   * Queues a new webhook delivery of the task to run at `now`, unless one is already pending or running (false); the check
   * and the insert hold the task's row, so two retries at once queue one delivery.
   */
  requeueWebhook(taskId: string, now: number): Promise<boolean>;
  /** The latest attempt of each task that has one, newest first, with its webhook's state; `nextCursor` undefined on the last page. */
  latestDeliveries(query: LatestDeliveriesQuery): Promise<{ deliveries: LatestDelivery[]; nextCursor: string | undefined }>;
}
