import { sql, type Kysely, type Transaction } from 'kysely';
import { jobMovesTo, type Job, type JobOutcome, type JobQueue, type JobStatus } from '../jobs/jobs.ts';
import { newId } from '../lib/ids.ts';
import type { Engine } from './database.ts';
import type { Database } from './schema.ts';

type Executor = Kysely<Database> | Transaction<Database>;

/**
 * The jobs table as a queue. A job is leased by one worker until `locked_until`; a worker that dies loses its lease and
 * the job is taken again. On PostgreSQL the lease skips rows other workers hold (`FOR UPDATE SKIP LOCKED`), so several
 * gateway processes never run one job twice at the same time; SQLite serialises writers by itself.
 */
export class SqlJobsRepository implements JobQueue {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly engine: Engine,
  ) {}

  /** Adds a job; pass the transaction of its cause so both commit together. */
  async enqueue(executor: Executor, job: { kind: string; subjectId: string; runAt: number; queueKey?: string }, now: number): Promise<string> {
    const id = newId('job');
    await executor
      .insertInto('jobs')
      .values({ id, kind: job.kind, subject_id: job.subjectId, queue_key: job.queueKey ?? null, status: 'pending', attempts: 0, run_at: job.runAt, locked_by: null, locked_until: null, last_error: null, created_at: now, updated_at: now })
      .execute();
    return id;
  }

  /**
   * Leases up to `limit` due jobs (pending and due, or running with an expired lease). A job with a queue key waits while
   * an older job of the same key is pending or running, so such jobs run one at a time and in order, across processes.
   */
  async lease(worker: string, now: number, leaseMs: number, limit: number): Promise<Job[]> {
    const lockClause = this.engine === 'postgres' ? sql`for update skip locked` : sql``;
    const result = await sql<{ id: string; kind: string; subject_id: string; attempts: number; run_at: number | string }>`
      update jobs set status = 'running', locked_by = ${worker}, locked_until = ${now + leaseMs}, updated_at = ${now}
      where id in (
        select id from jobs j
        where ((j.status = 'pending' and j.run_at <= ${now}) or (j.status = 'running' and j.locked_until < ${now}))
          and (j.queue_key is null or not exists (
            select 1 from jobs e
            where e.queue_key = j.queue_key and e.status in ('pending', 'running')
              and (e.created_at < j.created_at or (e.created_at = j.created_at and e.id < j.id))))
        order by j.run_at
        limit ${limit}
        ${lockClause}
      )
      returning id, kind, subject_id, attempts, run_at`.execute(this.db);
    return result.rows.map((row) => ({ id: row.id, kind: row.kind, subjectId: row.subject_id, attempts: row.attempts, runAt: Number(row.run_at) }));
  }

  /**
   * Ends a run of a job this worker holds, as its handler decided: `retry` counts a failed attempt, `wait` reschedules
   * without counting one. Only allowed transitions are written (running → pending | done | failed); false when the lease was lost
   * (another worker took it over).
   */
  async finish(job: Job, worker: string, outcome: JobOutcome, now: number): Promise<boolean> {
    const status: JobStatus = outcome.type === 'retry' || outcome.type === 'wait' ? 'pending' : outcome.type;
    const result = await this.db
      .updateTable('jobs')
      .set({
        status,
        attempts: outcome.type === 'wait' ? job.attempts : job.attempts + 1,
        run_at: outcome.type === 'retry' || outcome.type === 'wait' ? outcome.at : job.runAt,
        // A wait keeps the last real failure visible to operators.
        ...(outcome.type === 'wait' ? {} : { last_error: outcome.type === 'done' ? null : outcome.error }),
        locked_by: null,
        locked_until: null,
        updated_at: now,
      })
      .where('id', '=', job.id)
      .where('status', 'in', jobMovesTo(status))
      .where('locked_by', '=', worker)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
