import type { Kysely } from 'kysely';

/** Owners list their keys and org owners their org's (DESIGN §10), newest first: indexes for both lists. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('api_keys_user_created').on('api_keys').columns(['user_id', 'created_at']).execute();
  await db.schema.createIndex('api_keys_org_created').on('api_keys').columns(['org_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_org_created').execute();
  await db.schema.dropIndex('api_keys_user_created').execute();
}
