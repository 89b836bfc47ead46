import type { Kysely } from 'kysely';

/** Jobs that share a queue key run one at a time, in the order they were queued (a chat's replies). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('jobs').addColumn('queue_key', 'text').execute();
  await db.schema.createIndex('jobs_queue_key').on('jobs').columns(['queue_key', 'status']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('jobs_queue_key').execute();
  await db.schema.alterTable('jobs').dropColumn('queue_key').execute();
}
