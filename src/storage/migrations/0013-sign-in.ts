import { sql, type Kysely } from 'kysely';

/**
 * Customers sign in (DESIGN §10): users get an email (unique, stored lower-case), an argon2id password hash and an operator
 * flag; sessions live in the database (revocable); keys get a scope, an expiry, a disabled flag, a spend limit and a tokens-
 * per-minute limit (`rate_limit` stays the requests-per-minute limit).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('email', 'text').execute();
  await db.schema.alterTable('users').addColumn('password_hash', 'text').execute();
  await db.schema.alterTable('users').addColumn('operator', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('users_email').unique().on('users').column('email').execute();
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('csrf_token', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  for (const [name, type] of [
    ['scope', 'text'],
    ['expires_at', 'bigint'],
    ['spend_limit_nano', 'bigint'],
    ['spend_period', 'text'],
    ['tpm', 'integer'],
    ['last_used_at', 'bigint'],
  ] as const) {
    await db.schema.alterTable('api_keys').addColumn(name, type).execute();
  }
  await db.schema.alterTable('api_keys').addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await sql`update api_keys set scope = 'inference'`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropIndex('users_email').execute();
  for (const column of ['email', 'password_hash', 'operator']) await db.schema.alterTable('users').dropColumn(column).execute();
  for (const column of ['scope', 'expires_at', 'spend_limit_nano', 'spend_period', 'tpm', 'last_used_at', 'disabled']) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}
