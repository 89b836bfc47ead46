import type { Kysely } from 'kysely';

/**
 * Task cost adjustments (refunds, corrections) that still wait for the request-log row of the request that created the task
 * (issue 12). A refund moves the daily rollup in the task's own refund transaction when that row is written; when it is not
 * (yet), the adjustment waits here, keyed by its ledger entry id, and the request-log writer applies it with the row, in the
 * row's transaction — or, when no row comes, request-log upkeep applies it to the fallback rollup. Applied adjustments are
 * deleted in the transaction that applied them, so each moves the rollups exactly once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('usage_adjustments')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('task_id', 'text', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('day', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('usage_adjustments_task').on('usage_adjustments').columns(['task_id']).execute();
  await db.schema.createIndex('usage_adjustments_time').on('usage_adjustments').columns(['created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_adjustments').execute();
}
