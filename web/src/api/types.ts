/** The management API's answers as the console reads them (DESIGN §10); decimal money stays text. */

export interface SessionUser {
  id: string;
  email: string | null;
  name: string;
  balance: string;
  operator: boolean;
}

export interface Session {
  user: SessionUser;
  csrfToken: string;
}

export type OrgRole = 'owner' | 'admin' | 'member';

export interface MyOrg {
  id: string;
  name: string;
  role: OrgRole;
  balance: string;
  promptCaching: boolean;
}

export interface Me extends SessionUser {
  orgs: MyOrg[];
}

export interface List<T> {
  object: 'list';
  data: T[];
  next_cursor?: string | null;
}

export type SpendPeriod = 'day' | 'week' | 'month' | 'total';

export interface Key {
  id: string;
  name: string | null;
  scope: 'inference' | 'management';
  userId: string;
  orgId: string | null;
  allowedModels: string[] | null;
  expiresAt: string | null;
  disabled: boolean;
  limit: { amount: string; period: SpendPeriod } | null;
  rpm: number | null;
  tpm: number | null;
  createdAt: string | null;
  start: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  spent: string;
  remaining: string | null;
}

export interface CreatedKey extends Key {
  key: string;
}

export interface UsageRow {
  day?: string;
  model?: string;
  keyId?: string;
  endpoint?: string;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost: string;
}

export interface RequestRow {
  id: string;
  created: string;
  keyId: string | null;
  userId: string | null;
  orgId: string | null;
  endpoint: string;
  model: string | null;
  servedModel: string | null;
  provider: string | null;
  channel: string | null;
  attempts: number;
  stream: boolean;
  status: number;
  error_type: string | null;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost: string;
  latency_ms: number;
  ttft_ms: number | null;
}

export interface LedgerEntry {
  id: string;
  at: string;
  kind: string;
  amount: string;
  balanceAfter: string;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  note: string | null;
}

export interface OrgMember {
  id: string;
  email: string | null;
  name: string;
  role: OrgRole;
}

export interface Org {
  id: string;
  name: string;
  balance: string;
  promptCaching: boolean;
  role: OrgRole;
  members: OrgMember[];
}

export interface Invitation {
  id: string;
  orgId: string;
  email: string;
  role: OrgRole;
  status: string;
  createdAt: string;
  expiresAt: string;
  acceptedAt: string | null;
}

export interface CreatedInvitation extends Invitation {
  token: string;
  url: string;
}

export interface Bot {
  id: string;
  name: string;
  userId: string;
  orgId: string | null;
  assistantId: string;
  webhookUrl: string | null;
  createdAt: string;
}

export interface CreatedBot extends Bot {
  token: string;
}

export interface CatalogModel {
  id: string;
  title?: string | null;
  kind: string;
  owned_by: string;
  input_per_million: string;
  output_per_million: string;
  cost_request?: string;
  cost_minute?: string;
  deprecated: boolean;
  retiring: boolean;
  shutdown_date: string | null;
  deprecation_redirect_to: string | null;
}

/** GET /api/v1/payments/options: whether card top-ups are on, and their bounds (decimal text). */
export interface PaymentOptions {
  enabled: boolean;
  currency: string;
  min: string;
  max: string;
}

/** A card top-up (GET /api/v1/payments, POST /api/v1/payments/checkout adds `url`). */
export interface Payment {
  id: string;
  sessionId: string;
  account: { type: 'user' | 'org'; id: string };
  amount: string;
  currency: string;
  status: 'pending' | 'paid' | 'expired';
  refundedMinor: number;
  lostDispute: string | null;
  createdAt: string;
  paidAt: string | null;
}

/** A catalog entry as GET /admin/v1/models shows it (prices per 1,000 tokens, decimal text). */
export interface AdminModel {
  id: string;
  kind: string;
  title: string;
  provider: string;
  cost_context: string;
  cost_completion: string;
  cost_request?: string;
  cost_minute?: string;
  deprecated: boolean;
  deprecated_at: string | null;
  deprecation_redirect_to: string | null;
}

/** GET /admin/v1/keys/:id: the management API's key view (never the secret). */
export type AdminKey = Key;

/** GET /admin/v1/users/:id (never a password hash). */
export interface AdminUser {
  id: string;
  name: string;
  email: string | null;
  operator: boolean;
  balance: string;
}

/** A knowledge base (GET /api/v1/knowledge): its size as the service knows it. */
export interface KnowledgeBase {
  id: string;
  object: 'knowledge_base';
  title: string;
  documents: number;
  chunks: number;
  /** Characters of its documents' texts, summed. */
  characters: number;
  createdAt: string;
}

/** A document of a base (GET /api/v1/knowledge/:id/documents), without its text. */
export interface KnowledgeDocument {
  id: string;
  object: 'knowledge_document';
  knowledgeBaseId: string;
  title: string;
  characters: number;
  chunks: number;
  createdAt: string;
}

/** POST /api/v1/knowledge/:id/documents: the document and what its embedding cost (decimal text, as the ledger booked it). */
export interface AddedKnowledgeDocument extends KnowledgeDocument {
  embeddingTokens: number;
  cost: string;
}

export type TaskStatus = 'idle' | 'processing' | 'done' | 'failed';

/** A task (GET /api/v1/tasks): image, media or transcription. */
export interface Task {
  id: string;
  object: 'task';
  kind: 'imagine' | 'media' | 'transcription';
  type: string;
  parentId: string | null;
  model: string;
  servedModel: string;
  status: TaskStatus;
  percent: number;
  prompt: string | null;
  cost: string;
  paidBy: { type: 'user' | 'org'; id: string };
  keyId: string;
  result: { files: Array<{ url: string; contentType: string }>; text: string | null } | null;
  error: { code: string; message: string } | null;
  webhookUrl: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One attempt to deliver a task's webhook. */
export interface TaskDelivery {
  id: string;
  attempt: number;
  event: string;
  url: string;
  status: 'delivered' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  at: string;
}

/** GET /api/v1/tasks/:id: the task with its webhook deliveries and the next attempt, when one is queued. */
export interface TaskDetails extends Task {
  deliveries: TaskDelivery[];
  nextDelivery: { at: string; running: boolean } | null;
}
