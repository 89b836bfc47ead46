import { sql, type Kysely } from 'kysely';

/** Which fields of each model the operator set (admin API), so `models import` keeps them (DESIGN §14). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('models')
    .addColumn('operator_fields', 'text', (column) => column.notNull().defaultTo(sql`'[]'`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').dropColumn('operator_fields').execute();
}
