import type { Kysely } from 'kysely';

/**
 * A user's task list (the management API and the console, newest first by id) and a task's queued webhook delivery (its next
 * retry) are read by index: jobs are kept after they finish, so a scan by subject would grow with every task ever run.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('tasks_user_id').on('tasks').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('jobs_subject').on('jobs').columns(['subject_id', 'kind']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_subject').execute();
  await db.schema.dropIndex('tasks_user_id').execute();
}
