import type { JsonObject } from '../../core/chat-types.ts';
import { invalidParam } from '../../core/errors.ts';
import { audioSeconds } from '../../lib/audio-duration.ts';
import { costNumbers, emptyUsage, priceSeconds } from '../billing/pricing.ts';
import type { Resolution } from '../catalog/retirement.ts';
import { withFallbacks } from '../inference/fallbacks.ts';
import { authoriseModelCall, chargeCall, type Caller, type ModelCallDependencies } from '../inference/model-call.ts';
import type { Task } from './task.ts';
import type { TasksService } from './tasks-service.ts';

/** Fields the vendor's transcription API knows; others (our `async`, `webhook_url`, `useWalletBalance`) stay here. */
const VENDOR_FIELDS = new Set(['model', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities[]', 'include[]', 'chunking_strategy']);

export interface AudioFile {
  data: Buffer;
  filename: string;
  contentType: string;
}

/** A transcription request as its form gave it: every text field (repeated ones as lists) and the audio file. */
export interface TranscriptionInput {
  fields: Record<string, string | string[]>;
  file: AudioFile | undefined;
  /** `useWalletBalance` from the query string (the form's own field is read here). */
  useWalletBalance: boolean;
  /** The API key text of the request: it signs an asynchronous task's webhook. */
  apiKeyText: string;
}

export type TranscriptionOutcome =
  /** Asynchronous (`async=true` or a `webhook_url`): a task, charged from the file's own length. */
  | { type: 'task'; task: Task; resolution: Resolution }
  /** Synchronous: the vendor's answer in its own format; a JSON body has our `usage` costs (and `warnings`) added. */
  | { type: 'answer'; resolution: Resolution; contentType: string; body: string | JsonObject };

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** Whether the request asks for a task rather than an answer (the route picks the error shape by it before any check). */
export const isAsynchronous = (fields: TranscriptionInput['fields']): boolean => single(fields.async) === 'true' || fields.webhook_url !== undefined;

/** JSON transcription answers report the audio length; plain-text formats do not, and the file's own length is used. */
function billedSeconds(body: string, contentType: string, file: Buffer): number {
  if (contentType.includes('json')) {
    try {
      const parsed = JSON.parse(body) as { duration?: unknown; usage?: { type?: unknown; seconds?: unknown } };
      if (parsed.usage?.type === 'duration' && typeof parsed.usage.seconds === 'number') return parsed.usage.seconds;
      if (typeof parsed.duration === 'number') return parsed.duration;
    } catch {
      // fall back to the file
    }
  }
  return audioSeconds(file);
}

/**
 * POST /v1/audio/transcriptions behind the route: checks the form, then either transcribes at once (authorised, sent to the
 * serving model's vendor — or, when every channel of it fails, to its fallbacks — and charged per second of audio at the
 * model that served) or creates an asynchronous transcription task (tasks never fall back).
 */
export class TranscriptionService {
  constructor(
    private readonly calls: ModelCallDependencies,
    private readonly tasks: TasksService,
  ) {}

  async transcribe(caller: Caller, input: TranscriptionInput): Promise<TranscriptionOutcome> {
    const model = single(input.fields.model);
    if (!model) throw invalidParam('model', 'is required');
    const file = input.file;
    if (!file || file.data.length === 0) throw invalidParam('file', 'is required');
    if (single(input.fields.stream) === 'true') throw invalidParam('stream', 'is not supported by this gateway');
    const useWalletBalance = single(input.fields.useWalletBalance) === 'true' || input.useWalletBalance;
    if (isAsynchronous(input.fields)) return this.createTask(caller, model, file, input, useWalletBalance);

    const call = await authoriseModelCall(this.calls, caller, { model, endpoint: 'audio.transcriptions', kinds: ['transcription'], useWalletBalance });
    const vendorFields: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(input.fields)) if (VENDOR_FIELDS.has(name)) vendorFields[name] = value;
    // When every channel of the model fails, its fallbacks (those on an OpenAI-format provider: a media client) are tried
    // in turn, each sent the same form again (the file is held as a buffer); the attempt reads the served model, so a
    // rebind has nothing more to point; the charge follows the model that served.
    const response = await withFallbacks(
      this.calls,
      call,
      () => {
        const served = call.resolution.served;
        return this.calls.providers.media(served.provider).transcribe({ ...vendorFields, model: served.upstreamModel }, file, { requestId: caller.requestId, route: call.route });
      },
      { accepts: (fallback) => this.calls.providers.hasMedia(fallback.provider), rebind: () => {} },
    );
    const cost = priceSeconds(call.resolution.billed, billedSeconds(response.body, response.contentType, file.data));
    chargeCall(this.calls, call, cost, emptyUsage(), 'audio.transcriptions');
    if (!response.contentType.includes('json')) return { type: 'answer', resolution: call.resolution, contentType: response.contentType, body: response.body };
    const body = JSON.parse(response.body) as JsonObject;
    body.usage = { ...((body.usage as JsonObject | undefined) ?? {}), ...costNumbers(cost) };
    if (call.resolution.warning) body.warnings = [call.resolution.warning];
    return { type: 'answer', resolution: call.resolution, contentType: response.contentType, body };
  }

  private async createTask(caller: Caller, model: string, file: AudioFile, input: TranscriptionInput, useWalletBalance: boolean): Promise<TranscriptionOutcome> {
    const taskInput: JsonObject = {};
    for (const name of ['language', 'prompt', 'temperature'] as const) if (single(input.fields[name])) taskInput[name] = single(input.fields[name])!;
    const { task, resolution } = await this.tasks.create(caller, {
      kind: 'transcription',
      type: 'transcription',
      model,
      endpoint: 'audio.transcriptions',
      kinds: ['transcription'],
      input: taskInput,
      webhookUrl: single(input.fields.webhook_url),
      useWalletBalance,
      apiKeyText: input.apiKeyText,
      files: [{ name: file.filename, contentType: file.contentType, data: file.data }],
      price: (billed) => priceSeconds(billed, audioSeconds(file.data)).total,
    });
    return { type: 'task', task, resolution };
  }
}
