import type { JsonObject } from '../../core/chat-types.ts';
import type { MediaCall, MediaFile, OpenAiMedia } from '../../providers/openai/openai-media.ts';
import type { Model } from '../catalog/model.ts';
import type { Task, TaskError } from './task.ts';

/** One step of generating a task's output: finished with files (and text), still running at the vendor, or failed there. */
export type GenerationStep =
  | { type: 'done'; files: MediaFile[]; text?: string; /** Audio length the vendor reported (transcription). */ seconds?: number }
  | { type: 'waiting'; vendorId: string; percent: number; /** The channel whose vendor account holds the job. */ channel: string | null }
  | { type: 'failed'; error: TaskError };

/** SPEC leaves aspect ratios open: the `ar` values of media models map onto the vendor's image sizes. */
const SIZES: Record<string, string> = { '1:1': '1024x1024', '16:9': '1536x1024', '4:3': '1536x1024', '9:16': '1024x1536', '3:4': '1024x1536' };

const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

function imagePrompt(task: Task): { prompt: string; n: number } {
  const prompt = text(task.input.prompt);
  const action = task.type;
  if (action.startsWith('upscale_')) return { prompt: `${prompt} (image ${action.slice(-1)}, upscaled)`, n: 1 };
  if (action.startsWith('variation_')) return { prompt: `${prompt} (variation of image ${action.slice(-1)})`, n: 4 };
  if (action === 'reroll') return { prompt: `${prompt} (new take)`, n: 4 };
  return { prompt, n: task.kind === 'imagine' ? 4 : 1 };
}

/** Runs (or, for video, advances) the vendor call behind a task. Transcriptions are handled by the worker (they need the input file). */
export async function generateMedia(media: OpenAiMedia, task: Task, model: Model, call: MediaCall): Promise<GenerationStep> {
  const input: JsonObject = task.input;
  const mediaType = task.kind === 'imagine' ? 'image' : (model.mediaType ?? 'image');
  if (mediaType === 'image') {
    const { prompt, n } = imagePrompt(task);
    const size = SIZES[text(input.ar)] ?? (text(input.size) || undefined);
    return { type: 'done', files: await media.images({ model: model.upstreamModel, prompt, n, ...(size ? { size } : {}) }, call) };
  }
  if (mediaType === 'speech') {
    const file = await media.speech({ model: model.upstreamModel, input: text(input.prompt ?? input.input), voice: text(input.voice, 'alloy'), ...(input.format ? { response_format: text(input.format) } : {}) }, call);
    return { type: 'done', files: [file] };
  }
  const vendorId = task.result?.vendorId;
  // A video lives in the vendor account of the channel that started it: polls and the download go there.
  const pinned: MediaCall = { ...call, channel: task.result?.vendorChannel ?? null };
  const status = vendorId
    ? await media.videoStatus(vendorId, pinned)
    : await media.createVideo({ model: model.upstreamModel, prompt: text(input.prompt), ...(input.seconds ? { seconds: String(input.seconds) } : {}), ...(input.size ? { size: text(input.size) } : {}) }, call);
  const channel = vendorId ? (task.result?.vendorChannel ?? null) : call.route.channel;
  if (status.status === 'completed') return { type: 'done', files: [await media.videoContent(status.id, { ...call, channel })] };
  if (status.status === 'failed') return { type: 'failed', error: { code: 'generation_failed', message: status.error?.message ?? 'The vendor could not generate the video.' } };
  return { type: 'waiting', vendorId: status.id, channel, percent: Math.max(10, Math.min(95, Math.round(status.progress ?? 10))) };
}
