/** A unit of durable background work: it commits with its cause, survives restarts, and runs once across processes. */
export interface Job {
  id: string;
  kind: string;
  /** What the job works on (a task id). */
  subjectId: string;
  /** Attempts made before this one. */
  attempts: number;
  runAt: number;
}

/** What a handler decided: finished, try again at a time, or give up. */
export type JobOutcome = { type: 'done' } | { type: 'retry'; at: number; error: string } | { type: 'failed'; error: string };

export type JobHandler = (job: Job) => Promise<JobOutcome>;
