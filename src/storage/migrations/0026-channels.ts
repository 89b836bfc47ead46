import { sql, type Kysely } from 'kysely';

/**
 * Provider channels (issue 15, DESIGN §12): each provider reaches its vendor through one or more channels, each with its
 * own base URL, sealed vendor key, weight, priority and optional model list. A provider stored before this migration
 * becomes one channel `default` holding its base URL and key (moved as they are: sealed, or in clear from before keys were
 * sealed — the reseal at start upgrades those); `providers.base_url` keeps the first channel's URL for reading only, and
 * `providers.api_key` is no longer written.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('provider_channels')
    .addColumn('provider_id', 'text', (column) => column.notNull())
    .addColumn('id', 'text', (column) => column.notNull())
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('base_url', 'text', (column) => column.notNull())
    .addColumn('api_key', 'text')
    .addColumn('weight', 'integer', (column) => column.notNull())
    .addColumn('priority', 'integer', (column) => column.notNull())
    .addColumn('models', 'text')
    .addPrimaryKeyConstraint('provider_channels_pkey', ['provider_id', 'id'])
    .execute();
  await sql`insert into provider_channels (provider_id, id, position, base_url, api_key, weight, priority, models)
    select id, 'default', 0, base_url, api_key, 1, 0, null from providers`.execute(db);
  await sql`update providers set api_key = null`.execute(db);
  // A passed-through response lives in the vendor account of the channel that made it: GET and previous_response_id go there.
  await db.schema.alterTable('responses').addColumn('channel', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('responses').dropColumn('channel').execute();
  await sql`update providers set api_key = (select c.api_key from provider_channels c where c.provider_id = providers.id order by c.position limit 1)`.execute(db);
  await db.schema.dropTable('provider_channels').execute();
}
