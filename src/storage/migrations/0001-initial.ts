import type { Kysely } from 'kysely';

/** Accounts, keys, the ledger, providers, the model catalog and settings. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('balance_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('orgs')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('owner_id', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('balance_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('prompt_caching', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('org_members')
    .addColumn('org_id', 'text', (column) => column.notNull().references('orgs.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('role', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('org_members_pk', ['org_id', 'user_id'])
    .execute();
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('key_hash', 'text', (column) => column.notNull().unique())
    .addColumn('key_prefix', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id'))
    .addColumn('org_id', 'text', (column) => column.references('orgs.id'))
    .addColumn('name', 'text')
    .addColumn('allowed_models', 'text')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('ledger')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_type', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('request_id', 'text')
    .addColumn('model', 'text')
    .addColumn('description', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('ledger_account').on('ledger').columns(['account_type', 'account_id', 'created_at']).execute();
  await db.schema
    .createTable('providers')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('base_url', 'text', (column) => column.notNull())
    .addColumn('api_key', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('models')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('data', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (column) => column.primaryKey())
    .addColumn('value', 'text', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['settings', 'models', 'providers', 'ledger', 'api_keys', 'org_members', 'orgs', 'users']) {
    await db.schema.dropTable(table).execute();
  }
}
