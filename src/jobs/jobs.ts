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

/** How a job ends: done or failed for good, or pending again at `runAt`. */
export type JobFinish = { status: 'done' | 'failed'; error?: string } | { status: 'pending'; runAt: number; error: string };

/** The durable queue the runner leases from; storage/jobs-repository.ts implements it. */
export interface JobQueue {
  /** Leases up to `limit` due jobs for `worker` until `now + leaseMs`. */
  lease(worker: string, now: number, leaseMs: number, limit: number): Promise<Job[]>;
  /** Ends a job this worker holds; false when the lease was lost (another worker took it over). */
  finish(job: Job, worker: string, outcome: JobFinish, now: number): Promise<boolean>;
}
