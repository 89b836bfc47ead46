import type { JsonObject } from '../../core/chat-types.ts';
import type { Clock } from '../../lib/clock.ts';
import { priceRequest, type Cost } from '../billing/pricing.ts';
import type { CatalogService } from '../catalog/catalog-service.ts';
import type { Model, ModelKind } from '../catalog/model.ts';
import { modelNotFound, resolveModel, type Resolution } from '../catalog/retirement.ts';
import { checkModelAllowed, type Caller } from '../inference/model-call.ts';
import type { ApiKey } from '../keys/keys.ts';
import type { TaskCompletions } from './task-completions.ts';
import { isFinished, type Task } from './task.ts';
import type { TasksService } from './tasks-service.ts';
import type { CallSignal } from '../../lib/call-abort.ts';

export const MEDIA_KINDS: readonly ModelKind[] = ['media', 'image'];

/** How often a waiting generate request re-reads its task (a task another process runs sends no in-process notice). */
const WAIT_POLL_MS = 500;

export type MediaEndpoint = 'media.create' | 'media.tasks' | 'media.generate';

export interface MediaTaskInput {
  model: string;
  input: JsonObject;
  webhookUrl?: string | undefined;
  useWalletBalance: boolean;
  /** The API key text of the request: it signs the task's webhook. */
  apiKeyText: string;
}

export interface MediaTasksOptions {
  /** How long POST /v1/media/generate holds the request for its task (TOLLGATE_GENERATE_WAIT_MS). */
  generateWaitMs: number;
}

/** Media tasks of SPEC 4.10 and 9.6: the models a key may see, the price of one task, create, generate (create and wait), read. */
export class MediaTasksService {
  constructor(
    private readonly tasks: TasksService,
    private readonly catalog: CatalogService,
    private readonly completions: TaskCompletions,
    private readonly clock: Clock,
    private readonly options: MediaTasksOptions,
  ) {}

  /** Media and image models this key may use. */
  models(key: ApiKey | undefined): Model[] {
    const allowed = key?.allowedModels ?? null;
    return this.catalog.list().filter((model) => MEDIA_KINDS.includes(model.kind) && (allowed === null || allowed.includes(model.id)));
  }

  /** The price of one task of a model: unknown 404, not allowed 403; a retired model is priced as itself, with its headers. */
  price(caller: Caller, modelId: string): { resolution: Resolution; cost: Cost } {
    if (!this.catalog.get(modelId)) throw modelNotFound(modelId);
    checkModelAllowed(caller.key, modelId);
    const resolution = resolveModel(this.catalog, modelId, 'media.price', MEDIA_KINDS, this.clock.now());
    return { resolution, cost: priceRequest(resolution.billed) };
  }

  /** A media task, charged at creation; the job runner runs it in the background. */
  create(caller: Caller, input: MediaTaskInput, endpoint: MediaEndpoint): Promise<{ task: Task; resolution: Resolution }> {
    return this.tasks.create(caller, {
      kind: 'media',
      type: this.catalog.get(input.model)?.mediaType ?? 'image',
      model: input.model,
      endpoint,
      kinds: MEDIA_KINDS,
      input: input.input,
      webhookUrl: input.webhookUrl,
      useWalletBalance: input.useWalletBalance,
      apiKeyText: input.apiKeyText,
    });
  }

  /**
   * SPEC 9.6: creates the task and waits for that task alone — the job runner works on it in the background and the worker's
   * completion notice (or a re-read of the store) ends the wait — up to `generateWaitMs`; then the task as it stands.
   * The request never runs jobs itself: other tenants' work stays on the runner.
   */
  async generate(caller: Caller, input: MediaTaskInput, signal?: CallSignal): Promise<{ task: Task; finished: boolean }> {
    const { task } = await this.create(caller, input, 'media.generate');
    await this.completions.waitFor(task.id, {
      timeoutMs: this.options.generateWaitMs,
      pollMs: WAIT_POLL_MS,
      finished: async () => isFinished(await this.tasks.get(caller, task.id)),
      ...(signal ? { signal } : {}),
    });
    const current = await this.tasks.get(caller, task.id);
    return { task: current, finished: isFinished(current) };
  }

  get(caller: Caller, id: string): Promise<Task> {
    return this.tasks.get(caller, id);
  }
}
