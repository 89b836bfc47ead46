import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { RedisRateLimiter } from '../../src/storage/rate-limiter.ts';
import { buildApp, type App } from '../../src/app.ts';
import { testConfig, type Config } from '../../src/config/config.ts';
import { singleChannelProvider } from '../../src/features/catalog/catalog.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { sha256Hex } from '../../src/lib/hashing.ts';
import { SecretBox } from '../../src/lib/secret-box.ts';
import { createLogger, DEFAULT_CATALOG, readCatalogFile } from '../../src/runtime.ts';
import { DatabaseChangeBus, LocalChangeBus, RedisChangeBus, type ChangeBus } from '../../src/storage/change-bus.ts';
import { dropPostgresSchema, openStorage, type Storage } from '../../src/storage/database.ts';
import { startSimulator, type Simulator } from '../../simulator/server.ts';
import { jsonClient } from './json-client.ts';

/** The PostgreSQL every test suite may use (CI and the dev machines have it). */
export const POSTGRES_URL = process.env.TOLLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TOLLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface TestGatewayOptions {
  /**
   * `sqlite` (in memory, default), `sqlite-file` (a file in a fresh folder, removed at close: WAL and all, as `npm start`
   * runs), `postgres` (a fresh schema, dropped at close), or a URL to share.
   */
  database?: 'sqlite' | 'sqlite-file' | 'postgres' | { url: string };
  clock?: ManualClock;
  simulator?: Simulator;
  redis?: boolean;
  /** Share changes through the database instead (PostgreSQL without Redis). */
  databaseChanges?: boolean;
  /** Redis key prefix; gateways sharing one database must share it. Default: a fresh one. */
  redisPrefix?: string;
  config?: Partial<Config>;
  /** Count rate limits in Redis (under `redisPrefix`), as several processes do. */
  redisRateLimits?: boolean;
  /** Run background jobs (tasks, webhooks) on their own; otherwise tests call `app.services.runner.runDue()`. */
  runJobs?: boolean;
  /** Seals secrets at rest; default: a box under TEST_MASTER_KEY. */
  secrets?: SecretBox;
  /** Keep every log line (debug level) in `logLines`. */
  captureLogs?: boolean;
}

export interface TestGateway {
  url: string;
  /** OpenAI SDK base URL. */
  openAiBaseUrl: string;
  app: App;
  storage: Storage;
  simulator: Simulator;
  clock: ManualClock;
  adminToken: string;
  databaseUrl: string;
  logLines: string[];
  /** Every SQL statement the gateway ran, in order. */
  queries: string[];
  /** Calls the admin API; returns status and parsed body. */
  admin<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }>;
  /** A user with a balance and one key (optionally bound to an org or limited to some models). */
  fundedKey(options?: { balance?: string; orgId?: string; userId?: string; allowedModels?: string[] | null; rateLimit?: number }): Promise<{ key: string; keyId: string; userId: string }>;
  /** The stored balance of a user or org, as decimal text (after pending ledger writes). */
  balance(account: { userId?: string; orgId?: string }): Promise<string>;
  close(): Promise<void>;
}

/** The master key of test gateways: gateways sharing a database share it, as a deployment's nodes do. */
export const TEST_MASTER_KEY = createHash('sha256').update('tollgate test master key').digest();

export const uniqueSchema = (): string => `tg_test_${randomBytes(6).toString('hex')}`;

export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const ownSimulator = options.simulator === undefined;
  const simulator = options.simulator ?? (await startSimulator());
  let schema: string | undefined;
  let databaseUrl = 'sqlite::memory:';
  let folder: string | undefined;
  if (options.database === 'postgres') {
    schema = uniqueSchema();
    databaseUrl = `${POSTGRES_URL}?schema=${schema}`;
  } else if (options.database === 'sqlite-file') {
    folder = mkdtempSync(join(tmpdir(), 'tollgate-gateway-'));
    databaseUrl = `sqlite:${join(folder, 'tollgate.db')}`;
  } else if (typeof options.database === 'object') {
    databaseUrl = options.database.url;
  }
  const config = testConfig({ databaseUrl, ...options.config });
  const queries: string[] = [];
  const storage = await openStorage(databaseUrl, { onQuery: (sql) => void queries.push(sql) });
  const clock = options.clock ?? new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  const bus: ChangeBus = options.databaseChanges
    ? new DatabaseChangeBus(storage.db)
    : options.redis ? await RedisChangeBus.connect(REDIS_URL, options.redisPrefix ?? `tg_test_${randomBytes(4).toString('hex')}:`) : new LocalChangeBus();
  const adminToken = `admin-${randomBytes(16).toString('hex')}`;
  const logLines: string[] = [];
  const logger = options.captureLogs
    ? pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) })
    : createLogger(config);
  const limiter = options.redisRateLimits
    ? new RedisRateLimiter(new Redis(REDIS_URL), options.redisPrefix ?? `tg_test_${randomBytes(4).toString('hex')}:`, clock)
    : undefined;
  const app = await buildApp({
    ...(limiter ? { limiter } : {}),
    config,
    storage,
    clock,
    bus,
    logger,
    adminTokenHash: sha256Hex(adminToken),
    secrets: options.secrets ?? new SecretBox(TEST_MASTER_KEY),
    hashSecret: 'test-hash-secret',
    defaultProviders: [singleChannelProvider('openai', 'openai', `${simulator.url}/v1`, 'sim-openai'), singleChannelProvider('anthropic', 'anthropic', simulator.url, 'sim-anthropic')],
  });
  if (await app.services.catalog.isEmpty()) await app.services.catalog.importModels(readCatalogFile(DEFAULT_CATALOG));
  await app.server.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.server.address() as AddressInfo).port}`;
  app.services.publicUrl.base = url;
  if (options.runJobs) app.services.runner.start();

  const admin = jsonClient(`${url}/admin/v1`, adminToken);

  const gateway: TestGateway = {
    url,
    openAiBaseUrl: `${url}/v1`,
    app,
    storage,
    simulator,
    clock,
    adminToken,
    databaseUrl,
    logLines,
    queries,
    admin,
    async fundedKey(input = {}) {
      const extra = input.rateLimit !== undefined ? { rateLimit: input.rateLimit } : {};
      let userId = input.userId;
      if (!userId) {
        const user = await admin<{ id: string }>('POST', '/users', { name: 'test user', balance: input.balance ?? '10.00' });
        if (user.status !== 200) throw new Error(`creating a user failed: ${JSON.stringify(user.body)}`);
        userId = user.body.id;
      }
      const created = await admin<{ id: string; key: string }>('POST', '/keys', { userId, orgId: input.orgId ?? null, allowedModels: input.allowedModels ?? null, ...extra });
      if (created.status !== 200) throw new Error(`creating a key failed: ${JSON.stringify(created.body)}`);
      return { key: created.body.key, keyId: created.body.id, userId };
    },
    async balance(account) {
      const query = account.userId ? `userId=${account.userId}` : `orgId=${account.orgId}`;
      const response = await admin<{ balance: string }>('GET', `/balance?${query}`);
      if (response.status !== 200) throw new Error(`reading a balance failed: ${JSON.stringify(response.body)}`);
      return response.body.balance;
    },
    async close() {
      await app.close();
      await bus.close();
      await storage.close();
      if (schema) await dropPostgresSchema(POSTGRES_URL, schema);
      if (folder) rmSync(folder, { recursive: true, force: true });
      if (ownSimulator) await simulator.close();
    },
  };
  return gateway;
}

/** Decimal text → integer micro-units, for exact comparisons of money in tests. */
export function micros(text: string | number): bigint {
  const value = typeof text === 'number' ? text.toFixed(6) : text;
  const [whole = '0', fraction = ''] = value.replace('-', '').split('.');
  const amount = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0').slice(0, 6));
  return value.startsWith('-') ? -amount : amount;
}
