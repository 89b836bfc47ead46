import { toUsageNumber } from '../../lib/money.ts';
import type { Task } from './task.ts';
import { IMAGE_ACTIONS } from './task.ts';

/** Turns a stored file id into the URL clients download it from (the gateway's own, DESIGN §5). */
export type FileUrl = (fileId: string) => string;

/** SPEC 2.7: the image task. `result` once done: `{images: [{url}]}`; `error` once failed: `{code, message}`. */
export function imageTaskView(task: Task, fileUrl: FileUrl): Record<string, unknown> {
  const cost = toUsageNumber(task.cost);
  const done = task.status === 'done';
  return {
    id: task.id,
    parentId: task.parentId,
    object: 'task',
    type: task.type,
    actions: done && !task.type.startsWith('upscale_') ? [...IMAGE_ACTIONS] : [],
    percent: task.percent,
    status: task.status,
    result: done && task.result ? { images: task.result.files.map((file) => ({ url: fileUrl(file.id) })) } : null,
    error: task.error,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, prompt_cost: cost, completion_cost: 0, total_cost: cost },
  };
}

/** SPEC 2.9: the media task (webhook body and GET /media/tasks/:id). Transcriptions add their `text` when done. */
export function mediaTaskView(task: Task, fileUrl: FileUrl): Record<string, unknown> {
  const view: Record<string, unknown> = {
    code: 0,
    id: task.id,
    model: task.model,
    type: task.type,
    status: task.status,
    result: task.status === 'done' && task.result ? task.result.files.map((file) => ({ url: fileUrl(file.id) })) : [],
    error: task.error,
    cost: toUsageNumber(task.cost),
    created_at: Math.floor(task.createdAt / 1000),
  };
  if (task.kind === 'transcription' && task.status === 'done' && task.result?.text !== undefined) view.text = task.result.text;
  return view;
}

export const taskView = (task: Task, fileUrl: FileUrl): Record<string, unknown> =>
  task.kind === 'imagine' ? imageTaskView(task, fileUrl) : mediaTaskView(task, fileUrl);
