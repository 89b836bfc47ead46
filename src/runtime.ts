import { SYSTEM_ACTOR } from './features/audit/audit-service.ts';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino, type Logger } from 'pino';
import type { AppDependencies, Services } from './app.ts';
import type { Config } from './config/config.ts';
import { singleChannelProvider, type ProviderRecord } from './features/catalog/catalog.ts';
import type { ModelInput } from './features/catalog/model.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { settleAdminToken } from './features/secrets/admin-token.ts';
import { openMasterSecrets } from './features/secrets/master-secrets.ts';
import { randomBase62 } from './lib/ids.ts';
import { secureDataDirectory, writePrivateFile } from './lib/master-key.ts';
import { parseMoney } from './lib/money.ts';
import { DatabaseChangeBus, LocalChangeBus, RedisChangeBus, type ChangeBus } from './storage/change-bus.ts';
import { openStorage, type Storage } from './storage/database.ts';
import { RedisRateLimiter } from './storage/rate-limiter.ts';
import { SqlSealedValuesRepository } from './storage/sealed-values-repository.ts';
import { SqlSettingsRepository } from './storage/settings-repository.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_CATALOG = join(ROOT, 'catalog', 'models.json');

export interface Runtime {
  dependencies: AppDependencies;
  /** The in-process simulator serving as both vendors when none is configured. */
  simulatorUrl: string | undefined;
  close(): Promise<void>;
}

export function createLogger(config: Readonly<Config>): Logger {
  return pino({
    level: config.logLevel,
    // API keys and tokens never reach the logs, whatever logs a request.
    redact: { paths: ['req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'apiKey', 'key'], censor: '[redacted]' },
  });
}

/** Opens the master key and reseals stored secrets under it, then settles the admin token's hash (DESIGN §14). */
async function openSecrets(config: Readonly<Config>, storage: Storage, logger: Logger) {
  const settings = new SqlSettingsRepository(storage.db);
  const hashSecret = config.hashSecret ?? (await settings.getOrSet('hash_secret', randomBase62(48)));
  secureDataDirectory(config.dataDir);
  const secrets = await openMasterSecrets(
    new SqlSealedValuesRepository(storage.db),
    { dataDir: config.dataDir, secretKey: config.secretKey, secretKeyPrevious: config.secretKeyPrevious, legacySecret: hashSecret },
    logger,
  );
  const adminToken = await settleAdminToken(settings, config.adminToken);
  return { hashSecret, secrets, adminTokenHash: adminToken.hash, ...(adminToken.generated ? { firstAdminToken: adminToken.generated } : {}) };
}

/** Opens storage, secrets and the change bus, and picks the default providers (or starts the simulator). */
export async function openRuntime(config: Readonly<Config>, options: { clock?: Clock; logger?: Logger; useSimulator?: boolean } = {}): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config);
  const storage = await openStorage(config.databaseUrl, {
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost; reconnecting'),
    backgroundCheckpoints: {
      failed: (message) => logger.warn({ error: message }, 'background WAL checkpoint failed; the gateway checkpoints past 64 MB of log meanwhile'),
      recovered: () => logger.info('background WAL checkpoints work again'),
    },
  });
  let secrets: Awaited<ReturnType<typeof openSecrets>>;
  try {
    secrets = await openSecrets(config, storage, logger);
  } catch (error) {
    await storage.close();
    throw error;
  }
  // Without Redis, processes sharing a database (gateways on PostgreSQL; a gateway and the CLI on one SQLite file) hear
  // each other through its `changes` table. Only an in-memory SQLite database is one process's alone.
  const sharedDatabase = storage.engine === 'postgres' || !/^sqlite:(:memory:)?$/.test(config.databaseUrl);
  const bus: ChangeBus = config.redisUrl
    ? await RedisChangeBus.connect(config.redisUrl, config.redisPrefix, redisTrouble(logger))
    : sharedDatabase
      ? new DatabaseChangeBus(storage.db)
      : new LocalChangeBus();
  const clock = options.clock ?? systemClock;
  const limiter = config.redisUrl
    ? new RedisRateLimiter(redisClientFor(new (await import('ioredis')).Redis(config.redisUrl, { maxRetriesPerRequest: 1, enableOfflineQueue: false }), logger), config.redisPrefix, clock)
    : undefined;

  let simulatorUrl: string | undefined;
  let closeSimulator: (() => Promise<void>) | undefined;
  const noVendor = !config.vendors.openai.apiKey && !config.vendors.anthropic.apiKey;
  if (options.useSimulator ?? noVendor) {
    const { startSimulator } = await import('../simulator/server.ts');
    const simulator = await startSimulator({ host: '127.0.0.1', port: 0 });
    simulatorUrl = simulator.url;
    closeSimulator = () => simulator.close();
    logger.warn({ simulator: simulator.url }, 'no vendor API key is set: serving every model from the built-in simulator');
  }
  const defaultProviders: ProviderRecord[] = [
    singleChannelProvider('openai', 'openai', simulatorUrl ? `${simulatorUrl}/v1` : config.vendors.openai.baseUrl, simulatorUrl ? 'simulator' : (config.vendors.openai.apiKey ?? null)),
    singleChannelProvider('anthropic', 'anthropic', simulatorUrl ?? config.vendors.anthropic.baseUrl, simulatorUrl ? 'simulator' : (config.vendors.anthropic.apiKey ?? null)),
  ];

  return {
    dependencies: { config, storage, clock, bus, logger, ...secrets, defaultProviders, ...(limiter ? { limiter } : {}) },
    simulatorUrl,
    async close() {
      await bus.close();
      await storage.close();
      await closeSimulator?.();
    },
  };
}

/** Logs Redis trouble once per outage, not once per reconnect attempt. */
function redisTrouble(logger: Logger): (error: Error) => void {
  let last = 0;
  return (error) => {
    const now = Date.now();
    if (now - last > 30_000) logger.warn({ err: error }, 'Redis is unreachable; serving on, with limits counted on this node');
    last = now;
  };
}

function redisClientFor<T extends { on(event: 'error', listener: (error: Error) => void): unknown }>(client: T, logger: Logger): T {
  client.on('error', redisTrouble(logger));
  return client;
}

export function readCatalogFile(path: string): ModelInput[] {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { models?: ModelInput[] } | ModelInput[];
  return Array.isArray(parsed) ? parsed : (parsed.models ?? []);
}

function writeSecretFile(path: string, text: string): void {
  secureDataDirectory(dirname(path));
  writePrivateFile(path, `${text}\n`);
}

/**
 * First start on an empty database: loads the shipped catalog, creates the demo user with a positive balance and one key,
 * and prints the key and the admin token (DESIGN §3). Later starts change nothing.
 */
export async function firstStart(services: Services, dependencies: AppDependencies, log: (line: string) => void = console.log): Promise<void> {
  const { config } = dependencies;
  if (await services.catalog.isEmpty()) {
    const count = await services.catalog.importModels(readCatalogFile(config.catalogPath ?? DEFAULT_CATALOG));
    dependencies.logger.info({ models: count }, 'model catalog loaded');
  }
  // Only a token generated by this start is known in clear; afterwards the database keeps its hash alone.
  const adminToken = dependencies.firstAdminToken;
  if (adminToken) {
    writeSecretFile(join(config.dataDir, 'admin-token'), adminToken);
    log(`admin token: ${adminToken} (also in ${join(config.dataDir, 'admin-token')})`);
  }
  if ((await services.accounts.countUsers()) > 0) return;
  const user = await services.accounts.createUser('demo', parseMoney('10.00')!, {}, SYSTEM_ACTOR);
  const { text } = await services.keys.create({ userId: user.id, orgId: null, name: 'demo', allowedModels: null });
  writeSecretFile(join(config.dataDir, 'demo-key'), text);
  log(`demo API key: ${text}`);
}
