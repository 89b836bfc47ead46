import cookie from '@fastify/cookie';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/config.ts';
import { AccountsService } from './features/accounts/accounts-service.ts';
import { BalanceBook } from './features/billing/balance-book.ts';
import { ReadinessService } from './features/health/readiness-service.ts';
import { CatalogService } from './features/catalog/catalog-service.ts';
import type { ProviderRecord } from './features/catalog/catalog.ts';
import { ChatCompletionsService } from './features/inference/chat-completions.ts';
import { EmbeddingsService } from './features/inference/embeddings.ts';
import { MessagesService } from './features/inference/messages.ts';
import { ModerationsService } from './features/inference/moderations.ts';
import { KeysService } from './features/keys/keys-service.ts';
import { KeyLimits } from './features/keys/key-limits.ts';
import { KeySpendBook } from './features/keys/key-spend.ts';
import { LastUsedRecorder } from './features/keys/last-used.ts';
import { OwnerKeysService } from './features/keys/owner-keys.ts';
import { AssistantChatService } from './features/assistants/assistant-chat.ts';
import { AssistantsService } from './features/assistants/assistants-service.ts';
import { Embedder } from './features/assistants/embedder.ts';
import { createToolsetFactories } from './features/assistants/tools/index.ts';
import type { ToolsetFactory } from './features/assistants/tools/toolset.ts';
import { registerAssistantRoutes } from './http/routes/assistants.ts';
import { registerKnowledgeRoutes } from './http/routes/knowledge.ts';
import { KnowledgeService } from './features/knowledge/knowledge-service.ts';
import { SqlKnowledgeRepository } from './storage/knowledge-repository.ts';
import { registerChatbotRoutes } from './http/routes/chatbot.ts';
import { BotOutboxDispatcher } from './features/chatbot/bot-outbox-dispatcher.ts';
import { BotReplyWorker } from './features/chatbot/bot-reply-worker.ts';
import { ChatbotService } from './features/chatbot/chatbot-service.ts';
import { SqlBotsRepository } from './storage/bots-repository.ts';
import { MemoryRateLimiter, type RateLimiter } from './storage/rate-limiter.ts';
import { SqlAssistantsRepository } from './storage/assistants-repository.ts';
import type { ModelCallDependencies } from './features/inference/model-call.ts';
import type { FileUrl } from './features/tasks/task-views.ts';
import { TaskWorker } from './features/tasks/task-worker.ts';
import { MediaTasksService } from './features/tasks/media-tasks-service.ts';
import { TaskCompletions } from './features/tasks/task-completions.ts';
import { TasksService } from './features/tasks/tasks-service.ts';
import { TranscriptionService } from './features/tasks/transcription-service.ts';
import { WebhookDispatcher } from './features/webhooks/webhook-dispatcher.ts';
import { WebhookDeliveriesService } from './features/webhooks/deliveries-service.ts';
import { registerFileRoutes } from './http/routes/files.ts';
import { registerImagegenRoutes } from './http/routes/imagegen.ts';
import { registerMediaRoutes } from './http/routes/media.ts';
import { registerTranscriptionRoutes } from './http/routes/transcriptions.ts';
import { JobRunner } from './jobs/job-runner.ts';
import type { SecretBox } from './lib/secret-box.ts';
import { SqlJobsRepository } from './storage/jobs-repository.ts';
import { SqlTasksRepository } from './storage/tasks-repository.ts';
import { registerAuth } from './http/plugins/auth.ts';
import { registerAuthRoutes } from './http/routes/management/auth.ts';
import { registerMeRoutes } from './http/routes/management/me.ts';
import { registerKeysRoutes } from './http/routes/management/keys.ts';
import { registerBotRoutes } from './http/routes/management/bots.ts';
import { registerAssistantManagementRoutes } from './http/routes/management/assistants.ts';
import { registerKnowledgeManagementRoutes } from './http/routes/management/knowledge.ts';
import { registerTaskManagementRoutes } from './http/routes/management/tasks.ts';
import { registerInvitationRoutes } from './http/routes/management/invitations.ts';
import { registerOrgRoutes } from './http/routes/management/orgs.ts';
import { InvitationsService } from './features/accounts/invitations-service.ts';
import { OrgsService } from './features/accounts/orgs-service.ts';
import { SignupService } from './features/accounts/signup-service.ts';
import { BotIntegrationsService } from './features/chatbot/bot-integrations-service.ts';
import { SqlInvitationsRepository } from './storage/invitations-repository.ts';
import { registerVoucherRedeemRoute } from './http/routes/management/vouchers.ts';
import { registerOrgAuditRoute } from './http/routes/management/audit.ts';
import { VouchersService } from './features/vouchers/vouchers-service.ts';
import { DirectoryService } from './features/accounts/directory-service.ts';
import { SqlAccountsDirectory } from './storage/accounts-directory-repository.ts';
import { SqlVouchersRepository } from './storage/vouchers-repository.ts';
import { SessionsService } from './features/accounts/sessions-service.ts';
import { AuditService } from './features/audit/audit-service.ts';
import { SqlAuditRepository } from './storage/audit-repository.ts';
import { SqlSessionsRepository } from './storage/sessions-repository.ts';
import { frameworkError, registerErrorHandling } from './http/plugins/errors.ts';
import { registerObservability } from './http/plugins/observability.ts';
import { registerAdminRoutes } from './http/routes/admin/index.ts';
import { registerChatCompletionsRoute } from './http/routes/chat-completions.ts';
import { registerEmbeddingsRoute } from './http/routes/embeddings.ts';
import { registerHealthRoutes } from './http/routes/health.ts';
import { registerMessagesRoutes } from './http/routes/messages.ts';
import { registerModelsRoute } from './http/routes/models.ts';
import { registerModerationsRoute } from './http/routes/moderations.ts';
import type { Clock } from './lib/clock.ts';
import type { Activity } from './lib/idle-gc.ts';
import { newId } from './lib/ids.ts';
import { jsonShape } from './lib/json-depth.ts';
import { decodeUtf8 } from './lib/utf8.ts';
import { routeSettings } from './http/context.ts';
import { GatewayError } from './core/errors.ts';
import { Metrics } from './lib/metrics.ts';
import { HttpClient } from './providers/http-client.ts';
import { ProviderRegistry } from './providers/registry.ts';
import type { ChangeBus } from './storage/change-bus.ts';
import { SqlAccountsRepository } from './storage/accounts-repository.ts';
import { SqlCatalogRepository } from './storage/catalog-repository.ts';
import type { Storage } from './storage/database.ts';
import { SqlKeysRepository } from './storage/keys-repository.ts';
import { SqlLedgerRepository } from './storage/ledger-repository.ts';
import { SqlIdempotencyRepository } from './storage/idempotency-repository.ts';
import { RequestLog } from './features/usage/request-log-writer.ts';
import { UsageService } from './features/usage/usage-service.ts';
import { SqlRequestLogRepository } from './storage/request-log-repository.ts';
import { registerUsageRoutes } from './http/routes/management/usage.ts';
import { ResponsesService } from './features/responses/responses-service.ts';
import { registerResponsesRoutes } from './http/routes/responses.ts';
import { SqlResponsesRepository } from './storage/responses-repository.ts';
import { registerAdminUsageRoutes } from './http/routes/admin/usage.ts';
import { registerWebRoutes } from './http/routes/web.ts';
import { PaymentsService } from './features/payments/payments-service.ts';
import { StripeVendor } from './features/payments/stripe-vendor.ts';
import { SqlPaymentsRepository } from './storage/payments-repository.ts';
import { AutoRechargeService } from './features/payments/auto-recharge-service.ts';
import { AUTO_RECHARGE_JOB, CARD_DETACH_JOB } from './features/payments/auto-recharge.ts';
import { SqlAutoRechargeRepository } from './storage/auto-recharge-repository.ts';
import { registerPaymentRoutes } from './http/routes/management/payments.ts';
import { EmailChangeService } from './features/accounts/email-change-service.ts';
import { PasswordResetService } from './features/accounts/password-reset-service.ts';
import { KeyLimitAlerts } from './features/mail/key-limit-alerts.ts';
import { LowBalanceAlerts } from './features/mail/low-balance-alerts.ts';
import { mailHost, MailOutbox } from './features/mail/mail-outbox.ts';
import { MAIL_JOB, MailSender } from './features/mail/mail-sender.ts';
import { smtpTransport } from './features/mail/smtp-transport.ts';
import { registerAccountLinkRoutes } from './http/routes/management/account-links.ts';
import { SqlAccountTokensRepository } from './storage/account-tokens-repository.ts';
import { SqlMailOutboxRepository } from './storage/mail-outbox-repository.ts';

/** A hop count as Fastify runs it (its types take no number): trust the first `hops` proxies in front of the gateway. */
function trustProxyOption(setting: boolean | number | string): boolean | string | ((address: string, hop: number) => boolean) {
  return typeof setting === 'number' ? (_address, hop) => hop < setting : setting;
}
import { OpenApiRegistry, registerOpenApiRoutes } from './http/openapi.ts';

export interface AppDependencies {
  config: Readonly<Config>;
  storage: Storage;
  clock: Clock;
  bus: ChangeBus;
  logger: Logger;
  /** SHA-256 hex of the admin token (the token itself is not kept, DESIGN §14). */
  adminTokenHash: string;
  /** The admin token when this start generated it (first start prints it and writes DATA_DIR/admin-token); else absent. */
  firstAdminToken?: string;
  /** Seals secrets at rest under the master key (provider API keys, bot tokens, webhook signing keys). */
  secrets: SecretBox;
  /** Secret of the keyed hashes the gateway derives (metadata.user_id on the messages endpoint). */
  hashSecret: string;
  /** Shared rate limiting (Redis when several processes serve); in memory when absent. */
  limiter?: RateLimiter;
  /** The default providers (`openai`, `anthropic`) from the environment or the built-in simulator. */
  defaultProviders: readonly ProviderRecord[];
}

export interface Services {
  accounts: AccountsService;
  sessions: SessionsService;
  audit: AuditService;
  orgs: OrgsService;
  invitations: InvitationsService;
  signup: SignupService;
  botIntegrations: BotIntegrationsService;
  vouchers: VouchersService;
  payments: PaymentsService;
  /** Card auto-recharge: saved cards, thresholds, off-session charges claimed by the ledger write. */
  autoRecharge: AutoRechargeService;
  directory: DirectoryService;
  /** Mail as durable jobs (DESIGN §15): the outbox, password reset and email change links. */
  mail: MailOutbox;
  passwordReset: PasswordResetService;
  emailChange: EmailChangeService;
  keys: KeysService;
  /** Keys as their users manage them (the management API's rules). */
  ownerKeys: OwnerKeysService;
  catalog: CatalogService;
  providers: ProviderRegistry;
  book: BalanceBook;
  /** The request log's writer and the traces of requests in flight. */
  requestLog: RequestLog;
  usage: UsageService;
  chat: ChatCompletionsService;
  /** POST /v1/responses and GET /v1/responses/:id (DESIGN §12). */
  responses: ResponsesService;
  embeddings: EmbeddingsService;
  moderations: ModerationsService;
  messages: MessagesService;
  tasks: TasksService;
  /** Task webhook deliveries as the operator sees and retries them. */
  deliveries: WebhookDeliveriesService;
  media: MediaTasksService;
  transcriptions: TranscriptionService;
  assistants: AssistantsService;
  assistantChat: AssistantChatService;
  /** Toolsets assistants may use (knowledge base, MCP, API functions, SQL store); extended by their features. */
  toolsets: ToolsetFactory[];
  embedder: Embedder;
  knowledge: KnowledgeService;
  chatbot: ChatbotService;
  limiter: RateLimiter;
  runner: JobRunner;
  /** The gateway's public base URL (result file links, webhook bodies): TOLLGATE_PUBLIC_URL, else the listening address. */
  publicUrl: { base: string };
  fileUrl: FileUrl;
  metrics: Metrics;
  readiness: ReadinessService;
  /** Requests begun and answered so far (the idle collector watches them). */
  activity: Activity;
  http: HttpClient;
  clock: Clock;
  config: Readonly<Config>;
}

export interface App {
  server: FastifyInstance;
  services: Services;
  /** The routes as GET /openapi.json describes them. */
  openApi: OpenApiRegistry;
  /** Stops accepting requests, finishes the ones in flight, writes pending ledger entries, closes connections. */
  close(): Promise<void>;
}

export function createServices(dependencies: AppDependencies): Services {
  const { config, storage, clock, bus, logger } = dependencies;
  const metrics = new Metrics(config.currency);
  const ledger = new SqlLedgerRepository(storage.db, storage.sqlite);
  const book = new BalanceBook(ledger, clock, config.ledgerFlushMs, logger.child({ component: 'ledger' }), metrics);
  const requestLogRepository = new SqlRequestLogRepository(storage.db, storage.sqlite);
  const requestLog = new RequestLog(requestLogRepository, clock, logger.child({ component: 'request-log' }), {
    enabled: config.requestLog,
    flushMs: config.requestLogFlushMs,
    retentionDays: config.requestLogDays,
  });
  book.onRecord(requestLog.charged);
  const audit = new AuditService(new SqlAuditRepository(storage.db), clock);
  const catalog = new CatalogService(new SqlCatalogRepository(storage.db, dependencies.secrets), bus, clock, audit);
  const http = new HttpClient(config.upstreamTimeoutMs, { observe: metrics.observeUpstream });
  const upstreamLog = logger.child({ component: 'upstream' });
  const providers = new ProviderRegistry(dependencies.defaultProviders, catalog, http, {
    attempts: config.upstreamAttempts,
    clock,
    // A failed attempt is never charged; it is logged, and counted in its channel's health.
    onAttemptFailed: ({ channel, attempt, error, requestId }) =>
      upstreamLog.warn({ requestId, channel, attempt, status: error.status, kind: error.kind }, `upstream attempt ${attempt} failed: ${error.message}`),
  });
  metrics.watchChannels(() => providers.channelStatuses());
  const keysRepository = new SqlKeysRepository(storage.db);
  const limiter = dependencies.limiter ?? new MemoryRateLimiter(clock);
  const keySpend = new KeySpendBook({ spentSince: (keyId, since) => keysRepository.spentSince(keyId, since), flush: () => book.flush() }, clock);
  book.onRecord((entry) => keySpend.observe(entry));
  const keyLimits = new KeyLimits(limiter, keySpend);
  const callDependencies: ModelCallDependencies = { metrics, catalog, providers, book, clock, keyLimits };
  const accountsRepository = new SqlAccountsRepository(storage.db);
  const accounts = new AccountsService(accountsRepository, ledger, book, clock, bus, new SqlIdempotencyRepository(storage.db), audit);
  const lastUsed = new LastUsedRecorder((ids, at) => keysRepository.touch(ids, at), clock, (error) => logger.warn({ err: error }, 'noting when a key was last used failed'));
  const keys = new KeysService(keysRepository, bus, clock, accounts, catalog, { limits: keyLimits, lastUsed, audit });
  const jobs = new SqlJobsRepository(storage.db, storage.engine);
  const tasksRepository = new SqlTasksRepository(storage.db, ledger, jobs);
  const { secrets } = dependencies;
  const publicUrl = { base: config.publicUrl ?? `http://${config.host}:${config.port}` };
  const fileUrl: FileUrl = (id) => `${publicUrl.base.replace(/\/+$/, '')}/v1/files/${id}`;
  const runner = new JobRunner(jobs, clock, logger.child({ component: 'jobs' }), { pollMs: 250, leaseMs: 120_000, concurrency: 8 });
  const completions = new TaskCompletions();
  runner.handle('task.run', new TaskWorker({ repository: tasksRepository, providers, catalog, book, clock, logger, completions, requestLog }).run);
  runner.handle(
    'webhook.task',
    new WebhookDispatcher(tasksRepository, secrets, clock, logger.child({ component: 'webhooks' }), {
      allowPrivateUrls: config.allowPrivateUrls,
      timeoutMs: config.webhookTimeoutMs,
      fileUrl,
    }).deliver,
  );
  const embedder = new Embedder(catalog, providers, config.embeddingModel);
  const assistantsRepository = new SqlAssistantsRepository(storage.db);
  const knowledge = new KnowledgeService(new SqlKnowledgeRepository(storage.db), embedder, book, clock);
  const assistants = new AssistantsService(assistantsRepository, accounts, catalog, embedder, book, clock, logger.child({ component: 'assistants' }), knowledge);
  const toolsets = createToolsetFactories({ config, knowledge, logger });
  const assistantChat = new AssistantChatService(callDependencies, assistants, assistantsRepository, toolsets);
  const bots = new SqlBotsRepository(storage.db, jobs);
  const chatbot = new ChatbotService(bots, book, secrets, clock, config.allowPrivateUrls, accounts, assistantsRepository);
  const tasks = new TasksService(callDependencies, tasksRepository, secrets, config.allowPrivateUrls, config.imagineModel);
  runner.handle('bot.reply', new BotReplyWorker({ bots, assistants: assistantsRepository, chat: assistantChat, catalog, book, clock, logger: logger.child({ component: 'chatbot' }), requestLog }).run);
  runner.handle('bot.deliver', new BotOutboxDispatcher(bots, secrets, clock, logger.child({ component: 'chatbot' }), { allowPrivateUrls: config.allowPrivateUrls, timeoutMs: config.webhookTimeoutMs }).deliver);
  // Mail (DESIGN §15): an outbox sent by `mail.send` jobs; low-balance and key-limit alerts ride on the ledger write.
  const mailIdentity = { from: config.mailFrom, host: mailHost(config.mailFrom) };
  const mailRepository = new SqlMailOutboxRepository(storage.db, jobs);
  const mail = new MailOutbox(mailRepository, clock, logger.child({ component: 'mail' }), secrets, mailIdentity, config.smtpUrl !== undefined);
  const mailTransport = config.smtpUrl === undefined ? undefined : smtpTransport(config.smtpUrl);
  runner.handle(MAIL_JOB, new MailSender(mailRepository, mailTransport, mailIdentity, secrets, clock, logger.child({ component: 'mail' })).deliver);
  ledger.watch(new LowBalanceAlerts(mail, config.currency).watch);
  ledger.watch(new KeyLimitAlerts(mail, keysRepository, clock, config.currency).watch);
  metrics.watchMail(() => mail.counts());
  // Card payments (DESIGN §15): Checkout top-ups, and auto-recharge claimed by the ledger write that crosses its threshold.
  const paymentsRepository = new SqlPaymentsRepository(storage.db, ledger);
  const cardVendor = config.stripe ? new StripeVendor(config.stripe.secretKey, config.stripe.webhookSecret, config.stripe.apiUrl) : undefined;
  const paymentSettings = { currency: config.currency, min: config.topUp.min, max: config.topUp.max, publicUrl };
  const autoRecharge = new AutoRechargeService(
    new SqlAutoRechargeRepository(storage.db, paymentsRepository, jobs),
    paymentsRepository,
    cardVendor,
    accounts,
    mail,
    audit,
    clock,
    logger.child({ component: 'payments' }),
    paymentSettings,
  );
  ledger.watch(autoRecharge.watch);
  runner.handle(AUTO_RECHARGE_JOB, autoRecharge.charge);
  runner.handle(CARD_DETACH_JOB, autoRecharge.detach);
  const payments = new PaymentsService(paymentsRepository, cardVendor, accounts, audit, bus, clock, paymentSettings, autoRecharge);
  const accountTokens = new SqlAccountTokensRepository(storage.db);
  const sessions = new SessionsService(accountsRepository, new SqlSessionsRepository(storage.db), clock);
  const orgs = new OrgsService(accounts, accountsRepository, audit);
  const botIntegrations = new BotIntegrationsService(chatbot, bots, accounts, assistantsRepository, audit, clock);
  orgs.onMemberRemoved(async (orgId, userId) => {
    await botIntegrations.revokeMemberBots(orgId, userId);
    await keys.revokeMemberKeys(orgId, userId, { type: 'system', id: null, ip: null });
  });
  return {
    accounts,
    audit,
    directory: new DirectoryService(new SqlAccountsDirectory(storage.db), accountsRepository, accounts, sessions, audit, bus),
    vouchers: new VouchersService(new SqlVouchersRepository(storage.db, ledger), accounts, audit, bus, clock),
    payments,
    autoRecharge,
    sessions,
    orgs,
    invitations: new InvitationsService(new SqlInvitationsRepository(storage.db), accounts, sessions, audit, clock, { signup: config.signup, publicUrl }, mail),
    mail,
    passwordReset: new PasswordResetService(accountsRepository, accountTokens, mail, audit, clock, {
      publicUrl,
      onError: (error) => logger.error({ err: error }, 'a password reset link could not be queued'),
    }),
    emailChange: new EmailChangeService(accountsRepository, accountTokens, mail, audit, clock, { publicUrl }),
    signup: new SignupService(accounts, sessions, config.signup),
    botIntegrations,
    assistants,
    assistantChat,
    limiter,
    chatbot,
    toolsets,
    embedder,
    knowledge,
    keys,
    ownerKeys: new OwnerKeysService(keys, accounts),
    catalog,
    providers,
    book,
    requestLog,
    usage: new UsageService(requestLogRepository, ledger, accounts),
    chat: new ChatCompletionsService(callDependencies),
    responses: new ResponsesService({
      ...callDependencies,
      responses: new SqlResponsesRepository(storage.db),
      retentionDays: config.responsesDays,
      report: (error, what) => logger.warn({ err: error, component: 'responses' }, what),
    }),
    embeddings: new EmbeddingsService(callDependencies),
    moderations: new ModerationsService(callDependencies),
    messages: new MessagesService(callDependencies, accounts, dependencies.hashSecret),
    tasks,
    deliveries: new WebhookDeliveriesService(tasksRepository, audit, clock),
    media: new MediaTasksService(tasks, catalog, completions, clock, { generateWaitMs: config.generateWaitMs }),
    transcriptions: new TranscriptionService(callDependencies, tasks),
    runner,
    publicUrl,
    fileUrl,
    metrics,
    readiness: new ReadinessService({ database: () => storage.ping(), ...(bus.ping ? { redis: () => bus.ping!() } : {}) }, () => book.health(), () => requestLog.health()),
    activity: { started: 0, requests: 0 },
    http,
    clock,
    config,
  };
}

/** Deeper JSON bodies are refused with a 400 (real requests, tool schemas included, stay far below). */
const MAX_JSON_DEPTH = 256;

/** Each route module gets the service it serves, never the whole set (the routes are doors onto the services). */
function registerRoutes(server: FastifyInstance, services: Services): void {
  const { clock, fileUrl } = services;
  registerHealthRoutes(server, services.metrics, services.readiness, services.config.metricsToken);
  registerModelsRoute(server, services.catalog, clock);
  registerChatCompletionsRoute(server, services.chat);
  registerResponsesRoutes(server, services.responses);
  registerEmbeddingsRoute(server, services.embeddings);
  registerModerationsRoute(server, services.moderations);
  registerMessagesRoutes(server, services.messages);
  registerImagegenRoutes(server, services.tasks, fileUrl);
  registerMediaRoutes(server, services.media, { fileUrl, clock, currency: services.config.currency });
  registerTranscriptionRoutes(server, services.transcriptions, fileUrl, services.config.bodyLimitBytes);
  registerFileRoutes(server, services.tasks);
  registerAssistantRoutes(server, { assistants: services.assistants, assistantChat: services.assistantChat, models: services.catalog });
  registerKnowledgeRoutes(server, services.knowledge);
  registerChatbotRoutes(server, services.chatbot);
  registerAdminRoutes(server, { accounts: services.accounts, keys: services.keys, catalog: services.catalog, botIntegrations: services.botIntegrations, deliveries: services.deliveries, vouchers: services.vouchers, payments: services.payments, audit: services.audit, directory: services.directory, orgs: services.orgs, passwordReset: services.passwordReset, channelHealth: (id) => services.providers.channelHealth(id), clock });
  registerAdminUsageRoutes(server, services.usage);
  registerManagementRoutes(server, services);
  // The web app (DESIGN §11): its paths and assets only, after the API's routes.
  registerWebRoutes(server);
}

/** The management API (/api/v1, DESIGN §10): the console's and scripts' door onto the same services. */
function registerManagementRoutes(server: FastifyInstance, services: Services): void {
  const secureCookies = services.config.publicUrl?.startsWith('https:') === true;
  registerAuthRoutes(server, { sessions: services.sessions, signup: services.signup }, { secureCookies });
  registerMeRoutes(server, { accounts: services.accounts, sessions: services.sessions, keys: services.keys, emailChange: services.emailChange });
  registerAccountLinkRoutes(server, { passwordReset: services.passwordReset, emailChange: services.emailChange });
  registerKeysRoutes(server, services.ownerKeys);
  registerOrgRoutes(server, { orgs: services.orgs, accounts: services.accounts });
  registerInvitationRoutes(server, { invitations: services.invitations, clock: services.clock }, { secureCookies });
  registerBotRoutes(server, services.botIntegrations);
  registerAssistantManagementRoutes(server, { assistants: services.assistants, assistantChat: services.assistantChat, models: services.catalog, limiter: services.limiter });
  registerKnowledgeManagementRoutes(server, services.knowledge);
  registerTaskManagementRoutes(server, services.tasks, services.fileUrl);
  registerUsageRoutes(server, services.usage);
  registerVoucherRedeemRoute(server, services.vouchers);
  registerPaymentRoutes(server, services.payments, services.autoRecharge);
  registerOrgAuditRoute(server, { accounts: services.accounts, audit: services.audit });
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
    trustProxy: trustProxyOption(dependencies.config.trustProxy),
    frameworkErrors: frameworkError,
  });
  registerObservability(server, services.metrics, services.activity, services.requestLog);
  await services.requestLog.maintain(true);
  await services.responses.maintain(true);
  // An empty body with content-type application/json is no body (the chat service posts /api/bot/balance that way). On the
  // model routes the body's bytes are kept with the count of keys its text wrote: a request that needs no change is sent
  // on as it came (bytesIfSameKeys in lib/json-depth.ts), not serialised again.
  const parseJson = server.getDefaultJsonParser('error', 'error');
  server.decorateRequest('bodyBytes', undefined);
  server.decorateRequest('bodyKeys', 0);
  server.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes === undefined || bytes.length === 0) return done(null, undefined);
    const text = decodeUtf8(bytes);
    const shape = jsonShape(text, MAX_JSON_DEPTH);
    if (shape.tooDeep) return done(new GatewayError('invalid_request', `body: nests deeper than ${MAX_JSON_DEPTH} levels`, { param: 'body' }), undefined);
    if (routeSettings(request).keepsBodyBytes) {
      request.bodyBytes = bytes;
      request.bodyKeys = shape.keys;
    }
    if (shape.namesPrototype) return parseJson(request, text, done);
    // No key is or may be __proto__ or constructor (jsonShape read every key): Fastify's parser would parse the text, then
    // search all of it with two regular expressions for such a key and find none (~23 µs for a 55 KB body). A text
    // JSON.parse refuses goes to Fastify's parser: it drops a byte-order mark before parsing, and makes the 400 otherwise.
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return parseJson(request, text, done);
    }
    done(null, value);
  });
  // Cookies are parsed only where a route reads the session (sessionToken in plugins/auth.ts), not on every request.
  await server.register(cookie, { hook: false });
  registerErrorHandling(server);
  registerAuth(server, { keys: services.keys, sessions: services.sessions, accounts: services.accounts }, dependencies.adminTokenHash, dependencies.clock);
  // GET /openapi.json and /docs: every route declares itself (config.doc); the registry records them as they come.
  const openApi = new OpenApiRegistry();
  openApi.watch(server);
  registerRoutes(server, services);
  if (dependencies.config.openapi) await registerOpenApiRoutes(server, openApi);
  await server.ready();

  return {
    server,
    services,
    openApi,
    async close() {
      await server.close();
      await services.runner.stop();
      await services.keys.close();
      await services.limiter.close();
      await services.book.close();
      await services.requestLog.close();
      await services.http.close();
    },
  };
}
