import type { Kysely } from 'kysely';

/**
 * Organisations run themselves (DESIGN §10): invitations to join an org (the token is stored only as its SHA-256; single use,
 * with an expiry), and bot integrations managed by their owner get a name and can be revoked (the row stays for its dialogs).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('org_id', 'text', (column) => column.notNull())
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('invited_by', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('invitations_org').on('invitations').columns(['org_id', 'id']).execute();
  await db.schema.alterTable('bots').addColumn('name', 'text').execute();
  await db.schema.alterTable('bots').addColumn('revoked_at', 'bigint').execute();
  await db.schema.createIndex('bots_user').on('bots').columns(['user_id', 'id']).execute();
  await db.schema.createIndex('bots_org').on('bots').columns(['org_id', 'id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('bots_org').execute();
  await db.schema.dropIndex('bots_user').execute();
  await db.schema.alterTable('bots').dropColumn('revoked_at').execute();
  await db.schema.alterTable('bots').dropColumn('name').execute();
  await db.schema.dropTable('invitations').execute();
}
