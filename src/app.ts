import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { AccountsService } from './features/accounts/accounts-service.ts';
import { BalanceBook } from './features/billing/balance-book.ts';
import { CatalogService } from './features/catalog/catalog-service.ts';
import type { ProviderRecord } from './features/catalog/catalog.ts';
import { ChatCompletionsService } from './features/inference/chat-completions.ts';
import { EmbeddingsService } from './features/inference/embeddings.ts';
import { MessagesService } from './features/inference/messages.ts';
import { ModerationsService } from './features/inference/moderations.ts';
import { KeysService } from './features/keys/keys-service.ts';
import { registerAuth } from './http/plugins/auth.ts';
import { registerErrorHandling } from './http/plugins/errors.ts';
import { registerObservability } from './http/plugins/observability.ts';
import { registerAdminRoutes } from './http/routes/admin/index.ts';
import { registerChatCompletionsRoute } from './http/routes/chat-completions.ts';
import { registerEmbeddingsRoute } from './http/routes/embeddings.ts';
import { registerHealthRoutes } from './http/routes/health.ts';
import { registerMessagesRoutes } from './http/routes/messages.ts';
import { registerModelsRoute } from './http/routes/models.ts';
import { registerModerationsRoute } from './http/routes/moderations.ts';
import type { Clock } from './lib/clock.ts';
import { newId } from './lib/ids.ts';
import { Metrics } from './lib/metrics.ts';
import { HttpClient } from './providers/http-client.ts';
import { ProviderRegistry } from './providers/registry.ts';
import type { ChangeBus } from './storage/change-bus.ts';
import { SqlAccountsRepository } from './storage/accounts-repository.ts';
import { SqlCatalogRepository } from './storage/catalog-repository.ts';
import type { Storage } from './storage/database.ts';
import { SqlKeysRepository } from './storage/keys-repository.ts';
import { SqlLedgerRepository } from './storage/ledger-repository.ts';

export interface AppDependencies {
  config: Readonly<Config>;
  storage: Storage;
  clock: Clock;
  bus: ChangeBus;
  logger: Logger;
  adminToken: string;
  /** Secret of the keyed hashes the gateway derives (metadata.user_id on the messages endpoint). */
  hashSecret: string;
  /** The default providers (`openai`, `anthropic`) from the environment or the built-in simulator. */
  defaultProviders: readonly ProviderRecord[];
}

export interface Services {
  accounts: AccountsService;
  keys: KeysService;
  catalog: CatalogService;
  providers: ProviderRegistry;
  book: BalanceBook;
  chat: ChatCompletionsService;
  embeddings: EmbeddingsService;
  moderations: ModerationsService;
  messages: MessagesService;
  metrics: Metrics;
  http: HttpClient;
  clock: Clock;
  config: Readonly<Config>;
}

export interface App {
  server: FastifyInstance;
  services: Services;
  /** Stops accepting requests, finishes the ones in flight, writes pending ledger entries, closes connections. */
  close(): Promise<void>;
}

export function createServices(dependencies: AppDependencies): Services {
  const { config, storage, clock, bus, logger } = dependencies;
  const metrics = new Metrics(config.currency);
  const ledger = new SqlLedgerRepository(storage.db);
  const book = new BalanceBook(ledger, clock, config.ledgerFlushMs, logger.child({ component: 'ledger' }), metrics);
  const catalog = new CatalogService(new SqlCatalogRepository(storage.db), bus, clock);
  const http = new HttpClient(config.upstreamTimeoutMs);
  const providers = new ProviderRegistry(dependencies.defaultProviders, catalog, http);
  const callDependencies = { metrics, catalog, providers, book, clock };
  const accounts = new AccountsService(new SqlAccountsRepository(storage.db), ledger, book, clock, bus);
  return {
    accounts,
    keys: new KeysService(new SqlKeysRepository(storage.db), bus, clock),
    catalog,
    providers,
    book,
    chat: new ChatCompletionsService(callDependencies),
    embeddings: new EmbeddingsService(callDependencies),
    moderations: new ModerationsService(callDependencies),
    messages: new MessagesService(callDependencies, accounts, dependencies.hashSecret),
    metrics,
    http,
    clock,
    config,
  };
}

/** Wires the gateway; never listens (main.ts does, tests use a random port or inject()). */
export async function buildApp(dependencies: AppDependencies): Promise<App> {
  const services = createServices(dependencies);
  await services.catalog.reload();
  const server = Fastify({
    loggerInstance: dependencies.logger as FastifyBaseLogger,
    bodyLimit: dependencies.config.bodyLimitBytes,
    genReqId: () => newId('request'),
    requestIdHeader: false,
    // Per-request info lines cost more than the rest of the hot path; errors are still logged by the error plugin.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
    forceCloseConnections: false,
  });
  registerObservability(server, services.metrics);
  registerErrorHandling(server);
  registerAuth(server, services.keys, dependencies.adminToken);
  registerHealthRoutes(server, services);
  registerModelsRoute(server, services);
  registerChatCompletionsRoute(server, services);
  registerEmbeddingsRoute(server, services);
  registerModerationsRoute(server, services);
  registerMessagesRoutes(server, services);
  registerAdminRoutes(server, services);
  await server.ready();

  return {
    server,
    services,
    async close() {
      await server.close();
      await services.book.close();
      await services.http.close();
    },
  };
}
