import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import type PgModule from 'pg';
import { migrationProvider } from './migrations/index.ts';
import type { Database } from './schema.ts';
import { WalCheckpointer, type CheckpointerEvents } from './wal-checkpointer.ts';

export type Engine = 'sqlite' | 'postgres';

export interface Storage {
  db: Kysely<Database>;
  engine: Engine;
  /**
   * The SQLite handle under `db` (SQLite only). Batched writers run cached prepared statements on it, always inside a
   * Kysely transaction: that transaction holds the one connection, so no other query interleaves with theirs.
   */
  sqlite?: SqliteDatabase.Database;
  /** Runs a real query (readiness); rejects when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

let pgModule: typeof PgModule | undefined;

/** node-postgres, loaded by a gateway on PostgreSQL only: a static import held ~15 MB of RSS in SQLite gateways too. */
function loadPg(): typeof PgModule {
  if (!pgModule) {
    pgModule = createRequire(import.meta.url)('pg') as typeof PgModule;
    // pg returns int8 as text; our int8 columns other than money (read via cast to text) are millisecond times.
    pgModule.types.setTypeParser(20, (value) => Number(value));
  }
  return pgModule;
}

/**
 * Opens `sqlite:<path>`, `sqlite::memory:` or `postgres://…[?schema=name]` and applies pending migrations.
 * A `schema` parameter selects (and creates) a PostgreSQL schema, so test runs never see each other's data.
 */
export interface StorageOptions {
  /** Called for every query run (tests count them: the request path must run none once caches are warm). */
  onQuery?: (sql: string) => void;
  /** Told of connection errors outside any query (a backend terminated, the server restarted); they must not end the process. */
  onConnectionError?: (error: Error) => void;
  /**
   * SQLite files only: copy the write-ahead log back from a worker thread (WalCheckpointer), told of its failures here, so
   * that no commit of the gateway's holds the event loop for the copy. The gateway (runtime.ts) asks for it; tools and
   * tests that open storage briefly do not.
   */
  backgroundCheckpoints?: CheckpointerEvents;
}

export async function openStorage(url: string, options: StorageOptions = {}): Promise<Storage> {
  const storage = url.startsWith('postgres') ? await openPostgres(url, options) : openSqlite(url, options);
  // On PostgreSQL the migration tables are looked up in the gateway's own schema: Kysely otherwise finds another schema's
  // `kysely_migration_lock` (several gateways or test runs on one server) and then fails to use it in this one.
  const schema = storage.engine === 'postgres' ? (new URL(url).searchParams.get('schema') ?? 'public') : undefined;
  const migrator = new Migrator({ db: storage.db, provider: migrationProvider, allowUnorderedMigrations: true, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error } = await migrator.migrateToLatest();
  if (error) {
    await storage.close();
    throw error instanceof Error ? error : new Error(String(error));
  }
  return storage;
}

const logOption = (options: StorageOptions) =>
  options.onQuery ? { log: (event: { query: { sql: string } }) => options.onQuery!(event.query.sql) } : {};

function openSqlite(url: string, options: StorageOptions): Storage {
  const path = url.replace(/^sqlite:/, '') || ':memory:';
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // SQLite gives its -wal and -shm files the database file's mode, so a 0600 database keeps them private too.
    closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
  }
  const database = new SqliteDatabase(path);
  database.pragma('journal_mode = WAL');
  if (path !== ':memory:') for (const suffix of ['-wal', '-shm']) if (existsSync(`${path}${suffix}`)) chmodSync(`${path}${suffix}`, 0o600);
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // The WAL is copied back into the database every 8,000 pages (32 MB) instead of SQLite's 1,000: a page written by many
  // commits in between (the ledger's, the balances', the log's newest pages) is copied once, and the commit that runs the
  // copy costs less often — ~2 µs of CPU per request at saturation (bench:profile). The file is cut back to 64 MB after.
  // Once a checkpointer runs in the background (every second) this connection copies only past 16,000 pages, if that falls behind.
  database.pragma('wal_autocheckpoint = 8000');
  const background = options.backgroundCheckpoints;
  const checkpointer = path !== ':memory:' && background ? new WalCheckpointer(path, background, () => database.pragma('wal_autocheckpoint = 16000')) : undefined;
  database.pragma('journal_size_limit = 67108864');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: reusingStatements(database) }), ...logOption(options) });
  const inode = path === ':memory:' ? undefined : statSync(path).ino;
  const checkFile = (): void => {
    // An open SQLite handle keeps working on a file deleted or replaced under it, and whatever it writes then is lost.
    if (inode !== undefined && statSync(path, { throwIfNoEntry: false })?.ino !== inode) throw new Error(`the database file ${path} was removed or replaced`);
  };
  return {
    db,
    engine: 'sqlite',
    sqlite: database,
    ping: async () => {
      checkFile();
      await ping(db);
    },
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

async function openPostgres(url: string, options: StorageOptions): Promise<Storage> {
  const pg = loadPg();
  const parsed = new URL(url);
  const schema = parsed.searchParams.get('schema');
  parsed.searchParams.delete('schema');
  if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`invalid PostgreSQL schema name ${schema}`);
  const connectionString = parsed.toString();
  if (schema) {
    const client = new pg.Client({ connectionString });
    await client.connect();
    try {
      await client.query(`create schema if not exists ${schema}`);
    } finally {
      await client.end();
    }
  }
  const pool = new pg.Pool({ connectionString, max: 10, connectionTimeoutMillis: 5_000, ...(schema ? { options: `-c search_path=${schema}` } : {}) });
  // An idle client whose backend goes away (pg_terminate_backend, a server restart) emits `error` on the pool; without a
  // listener that is an uncaught exception. The pool drops the client and opens a new one for the next query.
  pool.on('error', (error) => options.onConnectionError?.(error));
  // A client checked out between two queries (inside a transaction) is not covered by the pool's listener: its own
  // `error` event would end the process. The query under way fails and its caller retries.
  pool.on('connect', (client) => client.on('error', (error) => options.onConnectionError?.(error)));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...logOption(options) });
  await sql`select 1`.execute(db);
  return { db, engine: 'postgres', ping: () => ping(db), close: () => db.destroy() };
}

async function ping(db: Kysely<Database>): Promise<void> {
  // A read of a real table: a database file deleted or replaced under a running SQLite gateway fails here.
  await db.selectFrom('settings').select('key').limit(1).execute();
}

/** Drops a PostgreSQL schema made for a test run. */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  const client = new (loadPg().Client)({ connectionString: url });
  await client.connect();
  try {
    await client.query(`drop schema if exists ${schema} cascade`);
  } finally {
    await client.end();
  }
}

/** How many of Kysely's statements are kept prepared; past it the set starts again (SQL with literals in it would grow it). */
const KEPT_STATEMENTS = 256;

/**
 * better-sqlite3 as Kysely's SQLite dialect sees it, with each statement kept for the next query of the same text: the
 * dialect prepares every query it runs, and parsing and planning the ledger's and the log's batch statements again each
 * time was ~1.3 µs of a chat call (bench:profile). A statement still being iterated (a streamed select) is not handed out
 * twice: a second one is prepared. SQLite prepares a kept statement again by itself after a schema change.
 */
export function reusingStatements(database: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      const kept = statements.get(text);
      if (kept && !kept.busy) return kept;
      const statement = database.prepare(text);
      if (statements.size >= KEPT_STATEMENTS) statements.clear();
      statements.set(text, statement);
      return statement;
    },
  };
}
