// OpenAI video generation (Sora): POST /v1/videos (JSON or multipart/form-data, as the SDK sends it),
// GET /v1/videos (list), GET|DELETE /v1/videos/{id}, GET /v1/videos/{id}/content?variant=video|thumbnail|spritesheet.
// Defaults: model "sora-2", seconds "4" ("4"|"8"|"12"), size "720x1280" (720x1280|1280x720|1024x1792|1792x1024).
// Status progression: video-store.ts; only a handled GET /v1/videos/{id} counts as a poll.
// Content (only once completed; 404 "not ready" before, and for failed videos):
//   video       → video/mp4  = mp4File(deterministicBytes(`video\n${prompt}\n${seconds}\n${size}`, 256 × seconds))
//   thumbnail   → image/webp = webpFile(deterministicBytes(`thumbnail\n${prompt}\n${size}`, 64))
//   spritesheet → image/jpeg = jpegFile(deterministicBytes(`spritesheet\n${prompt}\n${size}`, 128))

import type { Exchange } from './exchange.ts';
import { sendBytes, sendJson, unixSeconds } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { deterministicBytes, jpegFile, mp4File, webpFile } from './media-bytes.ts';
import { settle, videoObject, type VideoJob } from './video-store.ts';
import { openAiError, openAiModelNotFound, type OpenAiErrorObject } from './vendor-errors.ts';

export const VIDEO_SECONDS: readonly string[] = ['4', '8', '12'];
export const VIDEO_SIZES: readonly string[] = ['720x1280', '1280x720', '1024x1792', '1792x1024'];
export const VIDEO_CONTENT_BYTES_PER_SECOND = 256;

export type VideoVariant = 'video' | 'thumbnail' | 'spritesheet';

const VARIANT_TYPES: Readonly<Record<VideoVariant, string>> = {
  video: 'video/mp4',
  thumbnail: 'image/webp',
  spritesheet: 'image/jpeg',
};

/** The exact body of GET /v1/videos/{id}/content for a completed video. */
export function videoContent(prompt: string, seconds: string, size: string, variant: VideoVariant = 'video'): Buffer {
  switch (variant) {
    case 'thumbnail': return webpFile(deterministicBytes(`thumbnail\n${prompt}\n${size}`, 64));
    case 'spritesheet': return jpegFile(deterministicBytes(`spritesheet\n${prompt}\n${size}`, 128));
    default: return mp4File(deterministicBytes(`video\n${prompt}\n${seconds}\n${size}`, VIDEO_CONTENT_BYTES_PER_SECOND * Number(seconds)));
  }
}

function invalidValue(param: string, value: unknown, supported: readonly string[]): { error: OpenAiErrorObject } {
  const list = supported.map((item) => `'${item}'`);
  const last = list.pop() ?? '';
  return openAiError(
    `Invalid value: ${JSON.stringify(value)}. Supported values are: ${list.join(', ')}, and ${last}.`,
    'invalid_request_error', param, 'invalid_value',
  );
}

function videoNotFound(id: string): { error: OpenAiErrorObject } {
  return openAiError(`Video with id '${id}' not found.`, 'invalid_request_error');
}

/** The create parameters from a JSON body or from multipart form fields. */
function createParams(exchange: Exchange): Record<string, unknown> | undefined {
  if (exchange.form !== undefined) return Object.fromEntries(exchange.form.fields);
  return isRecord(exchange.json) ? exchange.json : undefined;
}

export function handleCreateVideo(exchange: Exchange): void {
  const response = exchange.response;
  const body = createParams(exchange);
  if (body === undefined) return sendJson(response, 400, openAiError('Invalid body: expected a JSON object.', 'invalid_request_error'));
  if (typeof body.prompt !== 'string' || body.prompt === '') {
    return sendJson(response, 400, openAiError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
  }
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : 'sora-2';
  const seconds = body.seconds ?? '4';
  if (typeof seconds !== 'string' || !VIDEO_SECONDS.includes(seconds)) return sendJson(response, 400, invalidValue('seconds', seconds, VIDEO_SECONDS));
  const size = body.size ?? '720x1280';
  if (typeof size !== 'string' || !VIDEO_SIZES.includes(size)) return sendJson(response, 400, invalidValue('size', size, VIDEO_SIZES));
  if (model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(model));
  const now = unixSeconds();
  const job = exchange.state.videos.create({ model, prompt: body.prompt, seconds, size, createdAt: now });
  sendJson(response, 200, render(exchange, job, now));
}

function render(exchange: Exchange, job: VideoJob, now: number): Record<string, unknown> {
  return videoObject(job, settle(job, exchange.state.options.videoPollsToComplete, now));
}

function findJob(exchange: Exchange): VideoJob | undefined {
  const id = exchange.params.id ?? '';
  const job = exchange.state.videos.get(id);
  if (job === undefined) sendJson(exchange.response, 404, videoNotFound(id));
  return job;
}

export function handleRetrieveVideo(exchange: Exchange): void {
  const job = findJob(exchange);
  if (job === undefined) return;
  job.polls += 1;
  sendJson(exchange.response, 200, render(exchange, job, unixSeconds()));
}

export function handleDeleteVideo(exchange: Exchange): void {
  const job = findJob(exchange);
  if (job === undefined) return;
  exchange.state.videos.delete(job.id);
  sendJson(exchange.response, 200, { id: job.id, object: 'video.deleted', deleted: true });
}

export function handleVideoContent(exchange: Exchange): void {
  const response = exchange.response;
  const variant = exchange.query.get('variant') ?? 'video';
  if (!Object.hasOwn(VARIANT_TYPES, variant)) return sendJson(response, 400, invalidValue('variant', variant, Object.keys(VARIANT_TYPES)));
  const job = findJob(exchange);
  if (job === undefined) return;
  const phase = settle(job, exchange.state.options.videoPollsToComplete, unixSeconds());
  if (phase.status !== 'completed') {
    return sendJson(response, 404, openAiError(
      `Video is not ready yet, use GET /v1/videos/${job.id} to check status.`, 'invalid_request_error',
    ));
  }
  const kind = variant as VideoVariant;
  sendBytes(response, 200, videoContent(job.prompt, job.seconds, job.size, kind), VARIANT_TYPES[kind]);
}

/** GET /v1/videos?order=asc|desc (default desc)&limit=1..100 (default 20)&after=<id>. */
export function handleListVideos(exchange: Exchange): void {
  const order = exchange.query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') return sendJson(exchange.response, 400, invalidValue('order', order, ['asc', 'desc']));
  const limit = Number(exchange.query.get('limit') ?? '20');
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    return sendJson(exchange.response, 400, openAiError(`Invalid 'limit': expected an integer between 1 and 100.`, 'invalid_request_error', 'limit', 'invalid_value'));
  }
  const jobs = exchange.state.videos.list();
  if (order === 'desc') jobs.reverse();
  const after = exchange.query.get('after');
  const start = after === null ? 0 : jobs.findIndex((job) => job.id === after) + 1;
  const page = jobs.slice(start, start + limit);
  const now = unixSeconds();
  const data = page.map((job) => render(exchange, job, now));
  sendJson(exchange.response, 200, {
    object: 'list',
    data,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
    has_more: start + limit < jobs.length,
  });
}
