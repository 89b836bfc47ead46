import type { Kysely } from 'kysely';

/**
 * Ledger entries name the API key that caused them (key spend limits, usage by key), and an audit log records every
 * admin, operator and org-owner action (DESIGN §4: actor, action, target, before → after, at, ip).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('ledger').addColumn('key_id', 'text').execute();
  await db.schema.createIndex('ledger_key_time').on('ledger').columns(['key_id', 'created_at']).execute();
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .addColumn('actor_type', 'text', (column) => column.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target_type', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text')
    .addColumn('before', 'text')
    .addColumn('after', 'text')
    .addColumn('ip', 'text')
    .addColumn('org_id', 'text')
    .execute();
  await db.schema.createIndex('audit_log_time').on('audit_log').columns(['at', 'id']).execute();
  await db.schema.createIndex('audit_log_org').on('audit_log').columns(['org_id', 'at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropIndex('ledger_key_time').execute();
  await db.schema.alterTable('ledger').dropColumn('key_id').execute();
}
