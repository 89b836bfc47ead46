import type { JsonObject } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { newId, randomBase62 } from '../../lib/ids.ts';
import type { SecretBox } from '../../lib/secret-box.ts';
import { refuseUrl } from '../../lib/url-guard.ts';
import { priceRequest } from '../billing/pricing.ts';
import type { Model, ModelKind } from '../catalog/model.ts';
import type { Money } from '../../lib/money.ts';
import type { ModelEndpoint, Resolution } from '../catalog/retirement.ts';
import type { LedgerEntry } from '../billing/ledger.ts';
import { authoriseModelCall, type Caller, type ModelCallDependencies } from '../inference/model-call.ts';
import type { ImageAction, QueuedDelivery, Task, TaskDelivery, TaskKind, TaskListFilter, TasksRepository } from './task.ts';

export interface CreateTaskInput {
  kind: TaskKind;
  type: string;
  model: string;
  endpoint: ModelEndpoint;
  kinds: readonly ModelKind[];
  input: JsonObject;
  webhookUrl?: string | undefined;
  parentId?: string | null;
  useWalletBalance: boolean;
  /** The API key text of the request: it signs the task's webhook (SPEC 6.2), so it is kept sealed until delivery. */
  apiKeyText: string;
  /** Files the task needs (an audio file to transcribe), stored with it. */
  files?: Array<{ contentType: string; data: Buffer; name: string }>;
  /** The price when it is not the model's per-request price (per-minute transcription). */
  price?: (model: Model) => Money;
}

/** Creating and reading tasks; running them is the worker's (task-worker.ts). */
export class TasksService {
  constructor(
    private readonly dependencies: ModelCallDependencies,
    private readonly repository: TasksRepository,
    private readonly secrets: SecretBox,
    private readonly allowPrivateUrls: boolean,
    /** The model behind SPEC 4.7's imagine (TOLLGATE_IMAGINE_MODEL). */
    private readonly imagineModel: string,
  ) {}

  /**
   * Checks the model (404/403/410/402), the webhook URL, then stores the task, its charge (the model's per-request price,
   * SPEC 4.7: shown in `usage` at creation) and its job in one transaction.
   */
  async create(caller: Caller, input: CreateTaskInput): Promise<{ task: Task; resolution: Resolution }> {
    const call = await authoriseModelCall(this.dependencies, caller, { model: input.model, endpoint: input.endpoint, kinds: input.kinds, useWalletBalance: input.useWalletBalance });
    if (input.webhookUrl !== undefined) {
      const refused = await refuseUrl(input.webhookUrl, this.allowPrivateUrls);
      if (refused) throw invalidParam('webhook_url', refused);
    }
    const now = this.dependencies.clock.now();
    const cost = input.price ? input.price(call.resolution.billed) : priceRequest(call.resolution.billed).total;
    const files = (input.files ?? []).map((file) => ({ ...file, id: `file_${randomBase62(24)}` }));
    const task: Task = {
      id: newId('task'),
      kind: input.kind,
      type: input.type,
      parentId: input.parentId ?? null,
      userId: caller.key.userId,
      keyId: caller.key.id,
      payer: call.payer,
      model: call.resolution.requested.id,
      servedModel: call.resolution.served.id,
      status: 'idle',
      percent: 0,
      input: files.length > 0 ? { ...input.input, inputFiles: files.map((file) => ({ id: file.id, name: file.name, contentType: file.contentType })) } : input.input,
      result: null,
      error: null,
      cost,
      webhookUrl: input.webhookUrl ?? null,
      webhookSecret: input.webhookUrl ? this.secrets.seal(input.apiKeyText) : null,
      createdAt: now,
      updatedAt: now,
    };
    const charge: LedgerEntry | null =
      cost > 0n
        ? { id: newId('ledger'), account: call.payer, amount: -cost, kind: 'charge', requestId: caller.requestId, keyId: caller.key.id, model: call.resolution.billed.id, description: `task ${task.type}`, createdAt: now }
        : null;
    await this.repository.createWithCharge(task, charge, now, files);
    this.dependencies.book.invalidate(call.payer);
    if (charge) this.dependencies.book.announce(charge);
    if (caller.trace) caller.trace.taskId = task.id;
    return { task, resolution: call.resolution };
  }

  /**
   * A task of the caller's own (of `kind` when given); another user's task, or one of another kind, is as unknown as a missing
   * one. A task is its creating user's, whoever paid for it (an org key's task is still its user's, as SPEC's GET shows it).
   */
  async get(caller: Caller, id: string, kind?: TaskKind): Promise<Task> {
    const task = await this.repository.get(id);
    if (!task || task.userId !== caller.key.userId || (kind !== undefined && task.kind !== kind)) throw new GatewayError('not_found', `Task '${id}' not found.`, { param: 'id', originalId: id });
    return task;
  }

  /** The caller's tasks (every kind, made with any of the user's keys), newest first; `limit` of them after the id `after`. */
  list(caller: Caller, filter: TaskListFilter): Promise<Task[]> {
    return this.repository.listForUser(caller.key.userId, filter);
  }

  /** One of the caller's tasks with its webhook delivery attempts (oldest first) and the delivery queued next, if any. */
  async withDeliveries(caller: Caller, id: string): Promise<{ task: Task; deliveries: TaskDelivery[]; queued: QueuedDelivery | undefined }> {
    const task = await this.get(caller, id);
    const [deliveries, queued] = await Promise.all([this.repository.deliveries(task.id), this.repository.queuedDelivery(task.id)]);
    return { task, deliveries, queued };
  }

  /** A stored result file. */
  file(id: string): Promise<{ contentType: string; data: Buffer } | undefined> {
    return this.repository.file(id);
  }

  /** Webhook delivery attempts of a task (admin API). */
  deliveries(taskId: string): Promise<TaskDelivery[]> {
    return this.repository.deliveries(taskId);
  }

  /** SPEC 4.7 imagine: an image task of the gateway's image model (TOLLGATE_IMAGINE_MODEL). */
  async imagine(caller: Caller, input: { prompt: string; webhookUrl?: string | undefined; useWalletBalance: boolean; apiKeyText: string }): Promise<Task> {
    const { task } = await this.create(caller, {
      kind: 'imagine',
      type: 'imagine',
      model: this.imagineModel,
      endpoint: 'media.create',
      kinds: ['image'],
      input: { prompt: input.prompt },
      webhookUrl: input.webhookUrl,
      useWalletBalance: input.useWalletBalance,
      apiKeyText: input.apiKeyText,
    });
    return task;
  }

  /** A follow-up action on a finished image task: a child task with `parentId`, billed like any other. */
  async action(caller: Caller, parentId: string, action: ImageAction, apiKeyText: string, useWalletBalance: boolean): Promise<Task> {
    const parent = await this.get(caller, parentId);
    if (parent.kind !== 'imagine') throw invalidParam('taskId', 'must be an image task');
    if (parent.status !== 'done') throw invalidParam('taskId', 'the task must be done before an action can be taken on it');
    if (parent.type.startsWith('upscale_')) throw invalidParam('action', 'an upscaled image has no further actions');
    const { task } = await this.create(caller, {
      kind: 'imagine',
      type: action,
      model: parent.model,
      endpoint: 'media.create',
      kinds: ['image'],
      input: { ...parent.input, action, parentTaskId: parent.id },
      parentId: parent.id,
      useWalletBalance,
      apiKeyText,
      ...(parent.webhookUrl ? { webhookUrl: parent.webhookUrl } : {}),
    });
    return task;
  }
}
