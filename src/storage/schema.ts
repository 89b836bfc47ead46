import type { ColumnType } from 'kysely';
import type { TaskStatus } from '../features/tasks/task.ts';
import type { JobStatus } from '../jobs/jobs.ts';

/**
 * Table types of the one query layer (Kysely) both engines share.
 * Money columns hold nano-units as 64-bit integers; they are written as bigint and always read through
 * `cast(… as text)` (see money-sql.ts), because SQLite's driver and pg's would otherwise hand back a float or a string.
 * Times are Unix milliseconds; flags are 0/1 integers (SQLite has no boolean).
 */
type MoneyColumn = ColumnType<string, bigint, bigint>;

export interface UsersTable {
  id: string;
  name: string;
  balance_nano: MoneyColumn;
  created_at: number;
  /** Lower-case; null for users who cannot sign in (made by the admin API without one). */
  email: ColumnType<string | null, string | null | undefined, string | null>;
  /** argon2id (PHC string). */
  password_hash: ColumnType<string | null, string | null | undefined, string | null>;
  operator: ColumnType<number, number | undefined, number>;
  /** Mail when a debit takes the balance below this (migration 0022); null for no alert. */
  low_balance_alert_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  /** Auto-recharge's threshold while it is on with a saved card (migration 0025); else null. */
  auto_recharge_below_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
}

export interface SessionsTable {
  /** SHA-256 of the session cookie's token; the token itself is never stored. */
  id: string;
  user_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

export interface OrgsTable {
  id: string;
  name: string;
  owner_id: string;
  balance_nano: MoneyColumn;
  prompt_caching: number;
  created_at: number;
  low_balance_alert_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  auto_recharge_below_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: 'owner' | 'admin' | 'member';
}

export interface ApiKeysTable {
  id: string;
  key_hash: string;
  key_prefix: string;
  user_id: string;
  org_id: string | null;
  name: string | null;
  /** JSON array of model ids, or null for every model. */
  allowed_models: string | null;
  /** Requests per minute; null for no limit. */
  rate_limit: number | null;
  revoked_at: number | null;
  created_at: number;
  scope: ColumnType<'inference' | 'management', 'inference' | 'management' | undefined, 'inference' | 'management'>;
  expires_at: ColumnType<number | null, number | null | undefined, number | null>;
  disabled: ColumnType<number, number | undefined, number>;
  spend_limit_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  spend_period: ColumnType<'day' | 'week' | 'month' | 'total' | null, 'day' | 'week' | 'month' | 'total' | null | undefined, 'day' | 'week' | 'month' | 'total' | null>;
  tpm: ColumnType<number | null, number | null | undefined, number | null>;
  last_used_at: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface LedgerTable {
  id: string;
  account_type: 'user' | 'org';
  account_id: string;
  amount_nano: MoneyColumn;
  kind: 'charge' | 'credit' | 'refund';
  request_id: string | null;
  key_id: ColumnType<string | null, string | null | undefined, string | null>;
  model: string | null;
  description: string;
  created_at: number;
}

/** One authenticated request (migration 0016); token counts are bigint columns read as numbers. */
export interface RequestLogTable {
  id: string;
  created_at: number;
  account_type: 'user' | 'org';
  account_id: string;
  key_id: string;
  user_id: string;
  org_id: string | null;
  endpoint: string;
  model: string | null;
  served_model: string | null;
  provider: string | null;
  channel: string | null;
  attempts: number;
  stream: number;
  status: number;
  error_type: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_nano: MoneyColumn;
  latency_ms: number;
  ttft_ms: number | null;
  /** The task the request created, if any (its refund adjusts this request's rollup). */
  task_id: string | null;
}

/** Daily rollups of the request log: account × day (YYYY-MM-DD, UTC) × model ('' for none) × key × endpoint. */
export interface UsageDailyTable {
  account_type: 'user' | 'org';
  account_id: string;
  day: string;
  model: string;
  key_id: string;
  endpoint: string;
  user_id: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost_nano: MoneyColumn;
}

/** A task's refund or correction waiting for its request's log row (migration 0023); `id` is the ledger entry's. */
export interface UsageAdjustmentsTable {
  id: string;
  task_id: string;
  cost_nano: MoneyColumn;
  account_type: 'user' | 'org';
  account_id: string;
  day: string;
  model: string;
  key_id: string;
  user_id: string;
  endpoint: string;
  created_at: number;
}

export interface ProvidersTable {
  id: string;
  type: 'openai' | 'anthropic';
  base_url: string;
  api_key: string | null;
  updated_at: number;
}

/** A provider's channels (migration 0026): `api_key` sealed under the master key, `models` a JSON array or null (all). */
export interface ProviderChannelsTable {
  provider_id: string;
  id: string;
  position: number;
  base_url: string;
  api_key: string | null;
  weight: number;
  priority: number;
  models: string | null;
}

export interface ModelsTable {
  id: string;
  /** The whole model record (catalog/model.ts) as JSON. */
  data: string;
  /** JSON array of the model fields the operator set (OPERATOR_FIELDS); `models import` keeps them. */
  operator_fields: ColumnType<string, string | undefined, string>;
  updated_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface TasksTable {
  id: string;
  /** `imagine` (image task), `media` or `transcription`. */
  kind: string;
  /** The task `type` shown to clients (`imagine`, `upscale_1`, `image`, `speech`, `video`, `transcription`). */
  type: string;
  parent_id: string | null;
  user_id: string;
  key_id: string;
  payer_type: 'user' | 'org';
  payer_id: string;
  model: string;
  served_model: string;
  status: TaskStatus;
  percent: number;
  /** JSON: what the client asked for. */
  input: string;
  /** JSON: result files and fields, once done. */
  result: string | null;
  /** JSON: `{code, message}` once failed. */
  error: string | null;
  cost_nano: MoneyColumn;
  webhook_url: string | null;
  /** The creating API key, sealed with the server secret; the webhook signing secret, erased once delivered. */
  webhook_secret: string | null;
  created_at: number;
  updated_at: number;
}

export interface JobsTable {
  id: string;
  kind: string;
  subject_id: string;
  /** Jobs with the same key run one at a time, oldest first; null for independent jobs. */
  queue_key: string | null;
  status: JobStatus;
  attempts: number;
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface DeliveriesTable {
  id: string;
  task_id: string;
  attempt: number;
  url: string;
  event: string;
  status: 'delivered' | 'failed';
  http_status: number | null;
  error: string | null;
  duration_ms: number;
  at: number;
}

export interface FilesTable {
  id: string;
  task_id: string;
  content_type: string;
  /** Base64 of the bytes (one portable column type on both engines). */
  data: string;
  created_at: number;
}

export interface AssistantsTable {
  id: string;
  owner_id: string;
  mention: string;
  title: string;
  is_private: number;
  /** The organisation whose members see the assistant when it is private. */
  org_id: string | null;
  /** The assistant's settings (features/assistants/assistant.ts) as JSON. */
  data: string;
  likes: number;
  /** JSON array of float arrays: embeddings of title, subtitle and description, for the catalog's semantic search. */
  embedding: string | null;
  created_at: number;
  updated_at: number;
}

export interface AssistantReactionsTable {
  assistant_id: string;
  user_id: string;
  kind: 'like' | 'install';
  created_at: number;
}

export interface ChatMessagesTable {
  id: string;
  chat_id: string;
  owner_id: string;
  assistant_id: string;
  /** Order of the message in its chat. */
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  created_at: number;
}

export interface KnowledgeBasesTable {
  id: string;
  owner_id: string;
  title: string;
  created_at: number;
}

export interface KnowledgeDocumentsTable {
  id: string;
  base_id: string;
  title: string;
  text: string;
  created_at: number;
}

export interface KnowledgeChunksTable {
  id: string;
  base_id: string;
  document_id: string;
  seq: number;
  text: string;
  /** JSON float array. */
  embedding: string;
}

export interface BotsTable {
  id: string;
  user_id: string;
  /** Set when the bot belongs to an organisation: replies are charged to it. */
  org_id: string | null;
  assistant_id: string;
  /** SHA-256 of the bot token (inbound authentication). */
  token_hash: string;
  /** The token sealed with the server secret: it authorises the bot's own requests to the chat service. */
  token_sealed: string;
  webhook_url: string | null;
  created_at: number;
  /** The owner's label (management API); null for bots made before it existed. */
  name: ColumnType<string | null, string | null | undefined, string | null>;
  /** Set when the bot was deleted: its token stops working at once; the row stays for its dialogs. */
  revoked_at: ColumnType<number | null, number | null | undefined, number | null>;
}

/** An invitation to join an organisation; the token itself is shown once and never stored. */
export interface InvitationsTable {
  id: string;
  org_id: string;
  /** Lower-case; the accepting user's email must match. */
  email: string;
  role: 'owner' | 'admin' | 'member';
  token_hash: string;
  invited_by: string;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  accepted_by: string | null;
  revoked_at: number | null;
}

export interface BotDialogsTable {
  id: string;
  bot_id: string;
  chat_id: string;
  client_id: string;
  state: 'bot' | 'waiting' | 'agent' | 'closed';
  created_at: number;
  updated_at: number;
}

export interface BotEventsTable {
  id: string;
  bot_id: string;
  /** The chat service's event id: seen once, repeats ignored. */
  event_id: string;
  event: string;
  dialog_id: string | null;
  payload: string;
  created_at: number;
}

export interface BotOutboxTable {
  id: string;
  bot_id: string;
  /** Order of sending within the bot. */
  seq: number;
  payload: string;
  status: 'pending' | 'sending' | 'delivered' | 'failed';
  attempts: number;
  /** Not sent again before this time (back-off after a failure). */
  next_attempt_at: number;
  /** While `sending`: the worker's claim lasts until this time. */
  claimed_until: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

export interface ChangesTable {
  id: string;
  topic: string;
  subject: string;
  /** Unix milliseconds (wall clock: change notices are about real time, not the business clock). */
  at: number;
}

export interface BalanceLeasesTable {
  account_type: 'user' | 'org';
  account_id: string;
  /** The process holding the reservation. */
  node: string;
  amount_nano: MoneyColumn;
  expires_at: number;
}

/** What an API key spent in one UTC day (migration 0030), kept by the ledger write: Σ of its charges and refunds, negated. */
export interface KeySpendDailyTable {
  key_id: string;
  /** The day's UTC midnight, Unix ms. */
  day: number;
  spent_nano: MoneyColumn;
}

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  /** SHA-256 of the request body: the same key with another body is refused (409). */
  request_hash: string;
  entry_id: string;
  /** The first answer, as JSON text; null until the call has completed once. */
  response: string | null;
  created_at: number;
}

export interface AuditLogTable {
  id: string;
  at: number;
  /** `admin` (the admin token), `user` (a signed-in user or a management key's owner), `system`. */
  actor_type: string;
  actor_id: string | null;
  /** Dotted verb, e.g. `balance.credit`, `key.revoke`, `org.update`. */
  action: string;
  target_type: string;
  target_id: string | null;
  /** JSON of the state before and after (secrets never included). */
  before: string | null;
  after: string | null;
  ip: string | null;
  /** The organisation the action concerns, so its owners can read their org's audit entries. */
  org_id: string | null;
}

export interface VouchersTable {
  id: string;
  /** SHA-256 of the code; the code itself is shown once, when it is created. */
  code_hash: string;
  /** The code's first characters, to tell codes apart in lists. */
  code_start: string;
  amount_nano: MoneyColumn;
  note: string | null;
  created_at: number;
  expires_at: number | null;
  voided_at: number | null;
  redeemed_at: number | null;
  redeemed_by: string | null;
  account_type: 'user' | 'org' | null;
  account_id: string | null;
  /** The credit the redemption wrote. */
  ledger_id: string | null;
}

/** Responses made through /v1/responses (migration 0020): owner, and for translated models what continues them. */
export interface ResponsesTable {
  id: string;
  account_type: 'user' | 'org';
  account_id: string;
  key_id: string;
  model: string;
  provider: string;
  /** The provider channel that made it (migration 0026). */
  channel: string | null;
  /** 1 when the gateway translated the call (Claude): it renders GET itself; 0 when the vendor keeps the response. */
  translated: number;
  created_at: number;
  previous_response_id: string | null;
  /** JSON: the input items and output items of this turn (translated models, `store` not false). */
  conversation: string | null;
  /** JSON: the Response object as rendered (translated models). */
  body: string | null;
}

/** Card top-ups (migration 0021; `kind`, `failure` and a nullable `session_id` since 0025). */
export interface PaymentsTable {
  id: string;
  kind: ColumnType<'checkout' | 'auto_recharge', 'checkout' | 'auto_recharge' | undefined, 'checkout' | 'auto_recharge'>;
  session_id: string | null;
  account_type: 'user' | 'org';
  account_id: string;
  user_id: string;
  amount_nano: MoneyColumn;
  amount_minor: number;
  currency: string;
  status: 'pending' | 'paid' | 'expired' | 'failed';
  payment_intent: string | null;
  refunded_minor: number;
  lost_dispute: string | null;
  failure: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: number;
  paid_at: number | null;
}

/** Card auto-recharge per account (migration 0025). */
export interface AutoRechargeTable {
  account_type: 'user' | 'org';
  account_id: string;
  enabled: number;
  threshold_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  amount_nano: ColumnType<string | null, bigint | null | undefined, bigint | null>;
  customer_id: string | null;
  payment_method: string | null;
  card_brand: string | null;
  card_last4: string | null;
  card_exp_month: number | null;
  card_exp_year: number | null;
  last_attempt_at: ColumnType<number | null, number | null | undefined, number | null>;
  last_payment_id: string | null;
  /** The user who last set the choice (the payer of record of its charges). */
  configured_by: string | null;
  updated_at: number;
}

export interface Database {
  responses: ResponsesTable;
  payments: PaymentsTable;
  auto_recharge: AutoRechargeTable;
  vouchers: VouchersTable;
  audit_log: AuditLogTable;
  sessions: SessionsTable;
  balance_leases: BalanceLeasesTable;
  idempotency_keys: IdempotencyKeysTable;
  changes: ChangesTable;
  bots: BotsTable;
  invitations: InvitationsTable;
  bot_dialogs: BotDialogsTable;
  bot_events: BotEventsTable;
  bot_outbox: BotOutboxTable;
  assistants: AssistantsTable;
  assistant_reactions: AssistantReactionsTable;
  chat_messages: ChatMessagesTable;
  knowledge_bases: KnowledgeBasesTable;
  knowledge_documents: KnowledgeDocumentsTable;
  knowledge_chunks: KnowledgeChunksTable;
  tasks: TasksTable;
  jobs: JobsTable;
  deliveries: DeliveriesTable;
  files: FilesTable;
  users: UsersTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  api_keys: ApiKeysTable;
  ledger: LedgerTable;
  key_spend_daily: KeySpendDailyTable;
  request_log: RequestLogTable;
  usage_daily: UsageDailyTable;
  usage_adjustments: UsageAdjustmentsTable;
  providers: ProvidersTable;
  provider_channels: ProviderChannelsTable;
  models: ModelsTable;
  settings: SettingsTable;
  mail_outbox: MailOutboxTable;
  account_tokens: AccountTokensTable;
}

/** A rendered message waiting for (or done with) its `mail.send` job (migration 0022). */
export interface MailOutboxTable {
  id: string;
  kind: string;
  to_address: string;
  subject: string;
  text_body: string;
  html_body: string;
  /** Fixed when queued, so a message sent again after a crash is recognisably the same one. */
  message_id: string;
  /** Unique when set: the same alert noticed twice is queued once. */
  dedupe_key: string | null;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** A single-use link of an account (password reset, email change): only the token's SHA-256 is stored. */
export interface AccountTokensTable {
  token_hash: string;
  purpose: 'password_reset' | 'email_change';
  user_id: string;
  /** The new address of an email change. */
  email: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}
