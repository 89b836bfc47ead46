// Video generation jobs (POST /v1/videos) and their deterministic progress.
// Ids are `video_<n>`, n = 1, 2, … per simulator instance (never reused, also not after reset()).
// Status after k handled GET /v1/videos/{id} polls, with P = videoPollsToComplete:
//   k ≥ P → terminal: `completed` (progress 100, completed_at, expires_at = completed_at + 86400), or `failed`
//           (progress 100, error {code: "video_generation_failed"}) when the prompt contains SIM_FAIL;
//   k = 0 → `queued`, progress 0;  0 < k < P → `in_progress`, progress floor(100 × k / P).
// The create response is k = 0 (so P = 0 answers the create already terminal); terminal states are sticky.

export const VIDEO_FAIL_MARKER = 'SIM_FAIL';
export const VIDEO_EXPIRES_AFTER_SECONDS = 86_400;
export const VIDEO_FAILURE_MESSAGE = 'Video generation failed (simulated: the prompt contains SIM_FAIL).';
/** Oldest jobs are forgotten beyond this many. */
const MAX_VIDEOS = 10_000;

export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed';

export interface VideoJob {
  id: string;
  model: string;
  prompt: string;
  seconds: string;
  size: string;
  /** Unix seconds. */
  createdAt: number;
  /** Handled GET polls so far. */
  polls: number;
  /** Set once the job was first seen terminal. */
  finished: { status: 'completed' | 'failed'; at: number } | undefined;
}

export interface VideoPhase {
  status: VideoStatus;
  progress: number;
}

/** The status rule above, before stickiness (a pure function of polls, P and the prompt). */
export function videoPhase(polls: number, pollsToComplete: number, prompt: string): VideoPhase {
  const target = Math.max(0, Math.ceil(pollsToComplete));
  if (polls >= target) return { status: prompt.includes(VIDEO_FAIL_MARKER) ? 'failed' : 'completed', progress: 100 };
  if (polls === 0) return { status: 'queued', progress: 0 };
  return { status: 'in_progress', progress: Math.floor((100 * polls) / target) };
}

export class VideoStore {
  #jobs = new Map<string, VideoJob>();
  #count = 0;

  create(fields: Pick<VideoJob, 'model' | 'prompt' | 'seconds' | 'size' | 'createdAt'>): VideoJob {
    this.#count += 1;
    const job: VideoJob = { ...fields, id: `video_${this.#count}`, polls: 0, finished: undefined };
    this.#jobs.set(job.id, job);
    if (this.#jobs.size > MAX_VIDEOS) {
      const oldest = this.#jobs.keys().next();
      if (oldest.done !== true) this.#jobs.delete(oldest.value);
    }
    return job;
  }

  get(id: string): VideoJob | undefined {
    return this.#jobs.get(id);
  }

  delete(id: string): boolean {
    return this.#jobs.delete(id);
  }

  /** Oldest first. */
  list(): VideoJob[] {
    return [...this.#jobs.values()];
  }

  clear(): void {
    this.#jobs.clear();
  }
}

/** The job's current phase; records the moment it first turns terminal. */
export function settle(job: VideoJob, pollsToComplete: number, now: number): VideoPhase {
  if (job.finished !== undefined) return { status: job.finished.status, progress: 100 };
  const phase = videoPhase(job.polls, pollsToComplete, job.prompt);
  if (phase.status === 'completed' || phase.status === 'failed') job.finished = { status: phase.status, at: now };
  return phase;
}

/** The `Video` object of the OpenAI API. */
export function videoObject(job: VideoJob, phase: VideoPhase): Record<string, unknown> {
  const completedAt = phase.status === 'completed' ? (job.finished?.at ?? null) : null;
  return {
    id: job.id,
    object: 'video',
    model: job.model,
    status: phase.status,
    progress: phase.progress,
    created_at: job.createdAt,
    completed_at: completedAt,
    expires_at: completedAt === null ? null : completedAt + VIDEO_EXPIRES_AFTER_SECONDS,
    error: phase.status === 'failed' ? { code: 'video_generation_failed', message: VIDEO_FAILURE_MESSAGE } : null,
    prompt: job.prompt,
    remixed_from_video_id: null,
    seconds: job.seconds,
    size: job.size,
  };
}
