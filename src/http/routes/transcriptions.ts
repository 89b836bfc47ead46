import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../core/errors.ts';
import type { FileUrl } from '../../features/tasks/task-views.ts';
import { mediaTaskView } from '../../features/tasks/task-views.ts';
import { isAsynchronous, type TranscriptionInput, type TranscriptionService } from '../../features/tasks/transcription-service.ts';
import { keyText } from '../plugins/auth.ts';
import { callerOf, walletFromQuery } from '../caller.ts';

type TranscriptionForm = Pick<TranscriptionInput, 'fields' | 'file'>;

/**
 * The form's fields, for GET /openapi.json only: the form is streamed and its fields checked by the transcription service
 * (OpenAI's other fields are passed on to the vendor).
 */
const transcriptionForm = z.looseObject({
  file: z.string().meta({ format: 'binary', description: 'The audio file.' }),
  model: z.string().min(1),
  language: z.string().optional(),
  prompt: z.string().optional(),
  temperature: z.string().optional(),
  response_format: z.enum(['json', 'text', 'srt', 'verbose_json', 'vtt']).optional(),
  async: z.enum(['true', 'false']).optional().meta({ description: '`true`: answer at once with a task (SPEC 2.9).' }),
  webhook_url: z.string().optional().meta({ description: 'Asynchronous; the finished task is posted here.' }),
  useWalletBalance: z.enum(['true', 'false']).optional(),
});

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

/**
 * POST /v1/audio/transcriptions: OpenAI-compatible (multipart in, the vendor's formats out, 410 in shape A), or
 * asynchronous with `async=true` or a `webhook_url` (a task in SPEC 2.9's shape, errors in shape C).
 */
export function registerTranscriptionRoutes(app: FastifyInstance, transcriptions: TranscriptionService, fileUrl: FileUrl, bodyLimitBytes: number): void {
  // Multipart parsing in this route's own scope: the plugin adds an onResponse hook (it deletes saved uploads) that would
  // otherwise run, with its promises, after every request the gateway answers. Elsewhere a form body is a 415.
  void app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: bodyLimitBytes, files: 2, fields: 50 } });
    registerTranscriptionRoute(scope, transcriptions, fileUrl);
  });
}

function registerTranscriptionRoute(app: FastifyInstance, transcriptions: TranscriptionService, fileUrl: FileUrl): void {
  app.post('/v1/audio/transcriptions', { config: { name: 'audio.transcriptions', doc: { summary: 'Transcribe audio (OpenAI format), or as a task with async=true or a webhook_url', form: transcriptionForm } } }, async (request, reply) => {
    const form = await readForm(request);
    if (isAsynchronous(form.fields)) request.errorShape = 'C';
    const outcome = await transcriptions.transcribe(callerOf(request), {
      ...form,
      useWalletBalance: walletFromQuery(request),
      apiKeyText: keyText(request) ?? '',
    });
    reply.headers(outcome.resolution.headers);
    if (outcome.type === 'task') {
      return { ...mediaTaskView(outcome.task, fileUrl), ...(outcome.resolution.warning ? { warnings: [outcome.resolution.warning] } : {}) };
    }
    if (typeof outcome.body === 'string') return reply.type(outcome.contentType).send(outcome.body);
    return outcome.body;
  });
}
