import type { Kysely } from 'kysely';

/** Per-key request rate limits (requests per minute; null = none). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('rate_limit', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('rate_limit').execute();
}
