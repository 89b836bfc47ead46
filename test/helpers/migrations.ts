import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Migrator, type MigrationResultSet } from 'kysely';
import { dropPostgresSchema, openStorage, type Storage } from '../../src/storage/database.ts';
import { migrationProvider } from '../../src/storage/migrations/index.ts';
import { POSTGRES_URL, uniqueSchema } from './gateway.ts';

/** A database of a migration test, taken back to an earlier migration: rows are written there, then `migrateToLatest`. */
export interface DatabaseAtMigration {
  storage: Storage;
  /** The PostgreSQL schema (unused on SQLite). */
  schema: string;
  /** What migrating down did. */
  down: MigrationResultSet;
  /** Applies every later migration; fails the test if one fails. */
  migrateToLatest(): Promise<void>;
}

/**
 * Runs `body` on a fresh database (a temporary SQLite file, or a PostgreSQL schema of its own) migrated down to
 * `migration`, and removes the database after.
 */
export async function withDatabaseAt(engine: 'sqlite' | 'postgres', migration: string, body: (database: DatabaseAtMigration) => Promise<void>): Promise<void> {
  const schema = uniqueSchema();
  const directory = mkdtempSync(join(tmpdir(), 'tollgate-migration-'));
  const storage = await openStorage(engine === 'postgres' ? `${POSTGRES_URL}?schema=${schema}` : `sqlite:${join(directory, 'tollgate.db')}`);
  try {
    const migrator = new Migrator({ db: storage.db, provider: migrationProvider, allowUnorderedMigrations: true, ...(engine === 'postgres' ? { migrationTableSchema: schema } : {}) });
    const down = await migrator.migrateTo(migration);
    assert.equal(down.error, undefined);
    await body({
      storage,
      schema,
      down,
      migrateToLatest: async () => assert.equal((await migrator.migrateToLatest()).error, undefined),
    });
  } finally {
    await storage.close();
    if (engine === 'postgres') await dropPostgresSchema(POSTGRES_URL, schema);
    rmSync(directory, { recursive: true, force: true });
  }
}
