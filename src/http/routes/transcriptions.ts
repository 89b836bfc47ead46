import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../../app.ts';
import type { JsonObject } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { costNumbers, priceSeconds } from '../../features/billing/pricing.ts';
import { authoriseModelCall, chargeCall } from '../../features/inference/model-call.ts';
import { emptyUsage } from '../../features/billing/pricing.ts';
import { mediaTaskView } from '../../features/tasks/task-views.ts';
import { audioSeconds } from '../../lib/audio-duration.ts';
import { keyText } from '../plugins/auth.ts';
import { callerOf, walletFromQuery } from '../caller.ts';

interface TranscriptionForm {
  fields: Record<string, string | string[]>;
  file: { data: Buffer; filename: string; contentType: string } | undefined;
}

/** Fields the vendor's transcription API knows; others (our `async`, `webhook_url`, `useWalletBalance`) stay here. */
const VENDOR_FIELDS = new Set(['model', 'language', 'prompt', 'response_format', 'temperature', 'timestamp_granularities[]', 'include[]', 'chunking_strategy']);

async function readForm(request: FastifyRequest): Promise<TranscriptionForm> {
  if (!request.isMultipart()) throw new GatewayError('unsupported_media_type', 'content-type: must be multipart/form-data');
  const form: TranscriptionForm = { fields: {}, file: undefined };
  try {
    await readParts(request, form);
  } catch (error) {
    // Size limits keep their own 413; anything else the form parser throws (no boundary, a truncated part) is the client's form.
    if (error instanceof Error && 'statusCode' in error && typeof error.statusCode === 'number' && error.statusCode < 500) throw error;
    throw new GatewayError('invalid_request', 'body: is not a valid multipart form', { param: 'body', cause: error });
  }
  return form;
}

async function readParts(request: FastifyRequest, form: TranscriptionForm): Promise<void> {
  for await (const part of request.parts()) {
    if (part.type === 'file') {
      if (part.fieldname !== 'file') {
        await part.toBuffer();
        continue;
      }
      form.file = { data: await part.toBuffer(), filename: part.filename || 'audio', contentType: part.mimetype || 'application/octet-stream' };
    } else {
      const value = String(part.value);
      const existing = form.fields[part.fieldname];
      form.fields[part.fieldname] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
  }
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

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
 * POST /v1/audio/transcriptions: OpenAI-compatible (multipart in, the vendor's formats out, 410 in shape A), or
 * asynchronous with `async=true` or a `webhook_url` (a task in SPEC 2.9's shape, errors in shape C).
 */
export function registerTranscriptionRoutes(app: FastifyInstance, services: Services): void {
  app.post('/v1/audio/transcriptions', { config: { name: 'audio.transcriptions' } }, async (request, reply) => {
    const form = await readForm(request);
    const asynchronous = single(form.fields.async) === 'true' || form.fields.webhook_url !== undefined;
    if (asynchronous) request.errorShape = 'C';
    const model = single(form.fields.model);
    if (!model) throw invalidParam('model', 'is required');
    if (!form.file || form.file.data.length === 0) throw invalidParam('file', 'is required');
    if (single(form.fields.stream) === 'true') throw invalidParam('stream', 'is not supported by this gateway');
    const caller = callerOf(request);
    const useWalletBalance = single(form.fields.useWalletBalance) === 'true' || walletFromQuery(request);
    const file = form.file;

    if (asynchronous) {
      const input: JsonObject = {};
      for (const name of ['language', 'prompt', 'temperature'] as const) if (single(form.fields[name])) input[name] = single(form.fields[name])!;
      const { task, resolution } = await services.tasks.create(caller, {
        kind: 'transcription',
        type: 'transcription',
        model,
        endpoint: 'audio.transcriptions',
        kinds: ['transcription'],
        input,
        webhookUrl: single(form.fields.webhook_url),
        useWalletBalance,
        apiKeyText: keyText(request) ?? '',
        files: [{ name: file.filename, contentType: file.contentType, data: file.data }],
        price: (billed) => priceSeconds(billed, audioSeconds(file.data)).total,
      });
      reply.headers(resolution.headers);
      return { ...mediaTaskView(task, services.fileUrl), ...(resolution.warning ? { warnings: [resolution.warning] } : {}) };
    }

    const call = await authoriseModelCall(services.callDependencies, caller, { model, endpoint: 'audio.transcriptions', kinds: ['transcription'], useWalletBalance });
    const vendorFields: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(form.fields)) if (VENDOR_FIELDS.has(name)) vendorFields[name] = value;
    vendorFields.model = call.resolution.served.upstreamModel;
    const response = await services.providers.media(call.resolution.served.provider).transcribe(vendorFields, file, request.id);
    const cost = priceSeconds(call.resolution.billed, billedSeconds(response.body, response.contentType, file.data));
    chargeCall(services.callDependencies, call, cost, emptyUsage(), 'audio.transcriptions');
    reply.headers(call.resolution.headers);
    if (!response.contentType.includes('json')) return reply.type(response.contentType).send(response.body);
    const body = JSON.parse(response.body) as JsonObject;
    body.usage = { ...((body.usage as JsonObject | undefined) ?? {}), ...costNumbers(cost) };
    if (call.resolution.warning) body.warnings = [call.resolution.warning];
    return body;
  });
}
