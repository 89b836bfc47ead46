import type { MediaCall, OpenAiMedia } from '../../providers/openai/openai-media.ts';
import type { Model } from '../catalog/model.ts';
import type { GenerationStep } from './media-generation.ts';
import type { Task, TasksRepository } from './task.ts';

interface InputFile {
  id: string;
  name: string;
  contentType: string;
}

/** The asynchronous transcription: the stored audio goes to the vendor; the transcript becomes a text file and `text`. */
export async function transcribeTask(media: OpenAiMedia, repository: TasksRepository, task: Task, model: Model, call: MediaCall): Promise<GenerationStep> {
  const input = (task.input.inputFiles as InputFile[] | undefined)?.[0];
  const audio = input ? await repository.file(input.id) : undefined;
  if (!input || !audio) return { type: 'failed', error: { code: 'input_missing', message: 'The audio file of this task is gone.' } };
  const fields: Record<string, string> = { model: model.upstreamModel, response_format: 'json' };
  for (const name of ['language', 'prompt', 'temperature'] as const) {
    const value = task.input[name];
    if (typeof value === 'string' && value) fields[name] = value;
  }
  const response = await media.transcribe(fields, { data: audio.data, filename: input.name, contentType: input.contentType }, call);
  let text = response.body;
  let seconds: number | undefined;
  try {
    const parsed = JSON.parse(response.body) as { text?: unknown; usage?: { type?: unknown; seconds?: unknown } };
    if (typeof parsed.text === 'string') text = parsed.text;
    if (parsed.usage?.type === 'duration' && typeof parsed.usage.seconds === 'number') seconds = parsed.usage.seconds;
  } catch {
    // A plain-text answer is the transcript itself.
  }
  return { type: 'done', files: [{ data: Buffer.from(text, 'utf8'), contentType: 'text/plain; charset=utf-8' }], text, ...(seconds !== undefined ? { seconds } : {}) };
}
