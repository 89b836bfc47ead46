import type { Kysely } from 'kysely';

/** Change notices for processes that share a database without Redis (they poll this table). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('changes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('topic', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('changes_at').on('changes').column('at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('changes').execute();
}
