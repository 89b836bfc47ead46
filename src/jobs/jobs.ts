/** A unit of durable background work: it commits with its cause, survives restarts, and runs once across processes. */
export interface Job {
  id: string;
  kind: string;
  /** What the job works on (a task id). */
  subjectId: string;
  /** Failed attempts before this one (`retry` outcomes); waiting (`wait`) does not count. */
  attempts: number;
  runAt: number;
}

/** DESIGN §2: pending → running (leased) → done | failed, or back to pending to run again later. */
export type JobStatus = 'pending' | 'running' | 'done' | 'failed';

const JOB_TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['running'],
  // A lease that expires is taken over by another worker: running → running.
  running: ['running', 'pending', 'done', 'failed'],
  done: [],
  failed: [],
};

/** The statuses from which a job may move to `status` (the repository writes only these); finished jobs never run again. */
export const jobMovesTo = (status: JobStatus): JobStatus[] =>
  (Object.keys(JOB_TRANSITIONS) as JobStatus[]).filter((from) => JOB_TRANSITIONS[from].includes(status));

/**
 * What a handler decided: finished; `retry` after a failure (counted in `attempts`, so handlers can give up after a
 * number of them); `wait` to run again at a time without anything having failed (a vendor still working, a queue
 * head waiting for its turn — not counted); or give up.
 */
export type JobOutcome =
  | { type: 'done' }
  | { type: 'retry'; at: number; error: string }
  | { type: 'wait'; at: number; reason: string }
  | { type: 'failed'; error: string };

export type JobHandler = (job: Job) => Promise<JobOutcome>;


/** The durable queue the runner leases from; storage/jobs-repository.ts implements it. */
export interface JobQueue {
  /** Leases up to `limit` due jobs for `worker` until `now + leaseMs`. */
  lease(worker: string, now: number, leaseMs: number, limit: number): Promise<Job[]>;
  /** Ends a run as its handler decided (`retry` counts a failed attempt, `wait` does not); false when the lease was lost. */
  finish(job: Job, worker: string, outcome: JobOutcome, now: number): Promise<boolean>;
}
