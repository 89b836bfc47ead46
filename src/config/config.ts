import { z } from 'zod';
import { parseAmount, type Money } from '../lib/money.ts';

const booleanText = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1');

/** A positive amount of money as decimal text (`10.00`). */
const moneySetting = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, context): Money => {
      const amount = parseAmount(text);
      if (amount === undefined || amount <= 0n) {
        context.addIssue({ code: 'custom', message: 'must be a positive decimal amount such as 10.00' });
        return z.NEVER;
      }
      return amount;
    });

/** The only engines the gateway speaks; anything else would be taken for a file name and create files. */
const DATABASE_URL_PATTERN = /^(sqlite:.+|postgres(ql)?:\/\/.+)$/;

const environmentSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  TOLLGATE_LISTEN_BACKLOG: z.coerce.number().int().min(1).max(65535).default(4096),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z
    .string()
    .refine((url) => DATABASE_URL_PATTERN.test(url), {
      message: "must start with 'sqlite:' (e.g. sqlite:./data/tollgate.db or sqlite::memory:) or 'postgres://' / 'postgresql://'",
    })
    .optional(),
  REDIS_URL: z.string().optional(),
  REDIS_PREFIX: z.string().default('tollgate:'),
  TOLLGATE_ADMIN_TOKEN: z.string().min(16).optional(),
  TOLLGATE_CURRENCY: z.string().default('USD'),
  TOLLGATE_PUBLIC_URL: z.string().optional(),
  TOLLGATE_ALLOW_PRIVATE_URLS: booleanText,
  TOLLGATE_HASH_SECRET: z.string().optional(),
  TOLLGATE_SECRET_KEY: z.string().optional(),
  TOLLGATE_SECRET_KEY_PREVIOUS: z.string().optional(),
  TOLLGATE_BODY_LIMIT: z.coerce.number().int().positive().default(32 * 1024 * 1024),
  TOLLGATE_UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(600_000),
  TOLLGATE_UPSTREAM_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(3),
  TOLLGATE_LEDGER_FLUSH_MS: z.coerce.number().int().positive().default(25),
  TOLLGATE_REQUEST_LOG: z.enum(['on', 'off']).default('on'),
  TOLLGATE_REQUEST_LOG_FLUSH_MS: z.coerce.number().int().min(5).max(60_000).default(100),
  TOLLGATE_REQUEST_LOG_DAYS: z.coerce.number().int().positive().max(3650).default(30),
  TOLLGATE_RESPONSES_DAYS: z.coerce.number().int().positive().max(3650).default(30),
  TOLLGATE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TOLLGATE_CATALOG: z.string().optional(),
  TOLLGATE_IMAGINE_MODEL: z.string().default('gpt-image-1'),
  TOLLGATE_EMBEDDING_MODEL: z.string().default('text-embedding-3-small'),
  TOLLGATE_SQL_STORE_LIMIT_BYTES: z.coerce.number().int().positive().default(20 * 1024 * 1024),
  TOLLGATE_WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  TOLLGATE_GENERATE_WAIT_MS: z.coerce.number().int().positive().default(60_000),
  TOLLGATE_METRICS_TOKEN: z.string().min(1).optional(),
  TOLLGATE_SIGNUP: z.enum(['closed', 'invite', 'open']).default('closed'),
  TOLLGATE_TRUST_PROXY: z.string().min(1).optional(),
  STRIPE_SECRET_KEY: z.string().min(1).optional(),
  STRIPE_WEBHOOK_SECRET: z.string().min(1).optional(),
  TOLLGATE_STRIPE_API_URL: z.url({ protocol: /^https?$/ }).optional(),
  TOLLGATE_TOPUP_MIN: moneySetting('1.00'),
  TOLLGATE_TOPUP_MAX: moneySetting('10000.00'),
  TOLLGATE_OPENAPI: z.enum(['true', 'false', '1', '0', '']).optional(),
  TOLLGATE_SMTP_URL: z
    .string()
    .refine((url) => /^smtps?:\/\/[^/]+/.test(url), { message: "must start with 'smtp://' or 'smtps://', e.g. smtp://user:password@mail.example.com:587" })
    .optional(),
  TOLLGATE_MAIL_FROM: z.string().min(3).max(320).optional(),
  OPENAI_API_KEY: z.string().optional(),
  OPENAI_BASE_URL: z.string().default('https://api.openai.com/v1'),
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_BASE_URL: z.string().default('https://api.anthropic.com'),
});

export type SignupMode = 'closed' | 'invite' | 'open';

/** The gateway's configuration, parsed once from the environment and frozen. */
export interface Config {
  host: string;
  port: number;
  /**
   * Connections the kernel may hold, handshake done, until the event loop accepts them (listen(2)'s backlog; Linux caps it
   * at net.core.somaxconn). Node's default, 511, overflows when a burst of new connections meets a busy loop: the kernel
   * drops the overflow's handshakes and each of those clients waits a second for its retry.
   */
  listenBacklog: number;
  dataDir: string;
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…` / `postgresql://…` (checked by loadConfig: nothing else passes). */
  databaseUrl: string;
  redisUrl: string | undefined;
  redisPrefix: string;
  adminToken: string | undefined;
  currency: string;
  publicUrl: string | undefined;
  allowPrivateUrls: boolean;
  /** Secret for the keyed hashes the gateway derives (e.g. metadata.user_id); generated and stored when unset. */
  hashSecret: string | undefined;
  /** The master key sealing secrets at rest (32 bytes, base64 or hex); when unset, DATA_DIR/secret.key (created on first start). */
  secretKey: string | undefined;
  /** The master key before the last rotation: values still sealed under it open and are resealed on start. */
  secretKeyPrevious: string | undefined;
  bodyLimitBytes: number;
  upstreamTimeoutMs: number;
  /** Attempts per vendor call across a provider's channels, the first included (DESIGN §12). */
  upstreamAttempts: number;
  ledgerFlushMs: number;
  /** TOLLGATE_REQUEST_LOG=off stops writing the request log and its rollups (benchmark comparison). */
  requestLog: boolean;
  /** How long request-log rows wait in memory before their batch is written: longer batches cost less per row. */
  requestLogFlushMs: number;
  /** Days request-log rows are kept (rollups are kept for good). */
  requestLogDays: number;
  /** Days stored Responses API responses (owner, conversation) are kept. */
  responsesDays: number;
  logLevel: z.infer<typeof environmentSchema>['TOLLGATE_LOG_LEVEL'];
  catalogPath: string | undefined;
  /** The image model behind /v1/imagegen/imagine. */
  imagineModel: string;
  /** The embedding model of assistant catalog search and knowledge bases. */
  embeddingModel: string;
  /** Size limit of each assistant's SQL store. */
  sqlStoreLimitBytes: number;
  /** A webhook receiver that does not answer within this time has failed the attempt. */
  webhookTimeoutMs: number;
  /** How long POST /v1/media/generate waits for the result before answering with the task as it is. */
  generateWaitMs: number;
  /** When set, GET /metrics wants `Authorization: Bearer <token>`; when unset /metrics is open (bind to a private address). */
  metricsToken: string | undefined;
  /** Self sign-up (DESIGN §10): `closed` (operators create users), `invite` (only with an org invitation), `open`. */
  signup: SignupMode;
  /**
   * Behind a reverse proxy: which hops' `X-Forwarded-For` to believe for the client's address (login throttling, the admin-token
   * limiter and the audit log key on it). `false` (default): none; `true`: any; a number: that many hops; else addresses/CIDRs.
   */
  trustProxy: boolean | number | string;
  /** Card top-ups (DESIGN §15); absent without STRIPE_SECRET_KEY. */
  stripe: { secretKey: string; webhookSecret: string | undefined; apiUrl: string | undefined } | undefined;
  /** Bounds of one card top-up, in the gateway's currency. */
  topUp: { min: Money; max: Money };
  /** TOLLGATE_OPENAPI=false turns off GET /openapi.json and /docs (default on). */
  openapi: boolean;
  /** The mail server (DESIGN §15): `smtp://` (STARTTLS when offered) or `smtps://`; unset, no mail is sent. */
  smtpUrl: string | undefined;
  /** The From of every message: TOLLGATE_MAIL_FROM, else `Tollgate <no-reply@host of TOLLGATE_PUBLIC_URL>` (or localhost). */
  mailFrom: string;
  vendors: {
    openai: { apiKey: string | undefined; baseUrl: string };
    anthropic: { apiKey: string | undefined; baseUrl: string };
  };
}

/** TOLLGATE_TRUST_PROXY as Fastify's `trustProxy` takes it. */
function trustProxyOf(text: string | undefined): boolean | number | string {
  if (text === undefined || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  return text;
}

/** The host name of the public URL, for the default sender address; `localhost` without one. */
function publicHost(publicUrl: string | undefined): string {
  try {
    return publicUrl ? new URL(publicUrl).hostname || 'localhost' : 'localhost';
  } catch {
    return 'localhost';
  }
}

/** A configuration the gateway refuses to start with; its message is meant for the operator as it is. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const parsed = environmentSchema.safeParse(environment);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigurationError(`invalid configuration: ${problems}`);
  }
  const env = parsed.data;
  if (env.TOLLGATE_TOPUP_MIN > env.TOLLGATE_TOPUP_MAX) throw new ConfigurationError('invalid configuration: TOLLGATE_TOPUP_MIN is above TOLLGATE_TOPUP_MAX');
  return Object.freeze({
    host: env.HOST,
    port: env.PORT,
    listenBacklog: env.TOLLGATE_LISTEN_BACKLOG,
    dataDir: env.DATA_DIR,
    databaseUrl: env.DATABASE_URL ?? `sqlite:${env.DATA_DIR}/tollgate.db`,
    redisUrl: env.REDIS_URL,
    redisPrefix: env.REDIS_PREFIX,
    adminToken: env.TOLLGATE_ADMIN_TOKEN,
    currency: env.TOLLGATE_CURRENCY,
    publicUrl: env.TOLLGATE_PUBLIC_URL,
    allowPrivateUrls: env.TOLLGATE_ALLOW_PRIVATE_URLS,
    hashSecret: env.TOLLGATE_HASH_SECRET,
    secretKey: env.TOLLGATE_SECRET_KEY,
    secretKeyPrevious: env.TOLLGATE_SECRET_KEY_PREVIOUS,
    bodyLimitBytes: env.TOLLGATE_BODY_LIMIT,
    upstreamTimeoutMs: env.TOLLGATE_UPSTREAM_TIMEOUT_MS,
    upstreamAttempts: env.TOLLGATE_UPSTREAM_ATTEMPTS,
    ledgerFlushMs: env.TOLLGATE_LEDGER_FLUSH_MS,
    requestLog: env.TOLLGATE_REQUEST_LOG === 'on',
    requestLogFlushMs: env.TOLLGATE_REQUEST_LOG_FLUSH_MS,
    requestLogDays: env.TOLLGATE_REQUEST_LOG_DAYS,
    responsesDays: env.TOLLGATE_RESPONSES_DAYS,
    logLevel: env.TOLLGATE_LOG_LEVEL,
    catalogPath: env.TOLLGATE_CATALOG,
    imagineModel: env.TOLLGATE_IMAGINE_MODEL,
    embeddingModel: env.TOLLGATE_EMBEDDING_MODEL,
    sqlStoreLimitBytes: env.TOLLGATE_SQL_STORE_LIMIT_BYTES,
    webhookTimeoutMs: env.TOLLGATE_WEBHOOK_TIMEOUT_MS,
    generateWaitMs: env.TOLLGATE_GENERATE_WAIT_MS,
    metricsToken: env.TOLLGATE_METRICS_TOKEN,
    signup: env.TOLLGATE_SIGNUP,
    trustProxy: trustProxyOf(env.TOLLGATE_TRUST_PROXY),
    stripe: env.STRIPE_SECRET_KEY ? { secretKey: env.STRIPE_SECRET_KEY, webhookSecret: env.STRIPE_WEBHOOK_SECRET, apiUrl: env.TOLLGATE_STRIPE_API_URL } : undefined,
    topUp: { min: env.TOLLGATE_TOPUP_MIN, max: env.TOLLGATE_TOPUP_MAX },
    openapi: env.TOLLGATE_OPENAPI !== 'false' && env.TOLLGATE_OPENAPI !== '0',
    smtpUrl: env.TOLLGATE_SMTP_URL,
    mailFrom: env.TOLLGATE_MAIL_FROM ?? `Tollgate <no-reply@${publicHost(env.TOLLGATE_PUBLIC_URL)}>`,
    vendors: {
      openai: { apiKey: env.OPENAI_API_KEY, baseUrl: env.OPENAI_BASE_URL },
      anthropic: { apiKey: env.ANTHROPIC_API_KEY, baseUrl: env.ANTHROPIC_BASE_URL },
    },
  });
}

/** A configuration for tests: in-memory SQLite, quiet logs, private URLs allowed. */
export function testConfig(overrides: Partial<Config> = {}): Readonly<Config> {
  const base = loadConfig({ DATABASE_URL: 'sqlite::memory:', TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_ALLOW_PRIVATE_URLS: 'true' });
  return Object.freeze({ ...base, ledgerFlushMs: 5, requestLogFlushMs: 5, ...overrides });
}
