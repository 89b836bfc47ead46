/** The admin API's answers (DESIGN §4) as the operator pages read them; decimal money stays text, times are ISO 8601. */

import type { OrgRole } from './types.ts';

/** GET /admin/v1/orgs and /orgs/:id. */
export interface AdminOrg {
  id: string;
  name: string;
  ownerId: string;
  balance: string;
  promptCaching: boolean;
}

export interface AdminMember {
  userId: string;
  name: string;
  email: string | null;
  role: OrgRole;
}

export interface AdminOrgDetail extends AdminOrg {
  members: AdminMember[];
}

/** GET /admin/v1/ledger?userId=|orgId=: entries newest first. */
export interface AdminLedgerEntry {
  id: string;
  amount: string;
  kind: string;
  requestId: string | null;
  model: string | null;
  keyId: string | null;
  note: string | null;
  createdAt: string;
}

export type AccountRef = { type: 'user' | 'org'; id: string };

export const VOUCHER_STATES = ['active', 'redeemed', 'expired', 'void'] as const;
export type VoucherState = (typeof VOUCHER_STATES)[number];

/** A voucher without its code (only its start); POST /admin/v1/vouchers adds `code` once. */
export interface AdminVoucher {
  id: string;
  codeStart: string;
  amount: string;
  note: string | null;
  state: VoucherState;
  createdAt: string;
  expiresAt: string | null;
  voidedAt: string | null;
  redeemedAt: string | null;
  redeemedBy: string | null;
  account: AccountRef | null;
}

export interface CreatedVouchers {
  codes: string[];
  data: Array<AdminVoucher & { code: string }>;
}

export const DELIVERY_STATES = ['failed', 'pending', 'delivered'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** GET /admin/v1/deliveries without taskId: each task's latest webhook attempt with where the webhook stands. */
export interface AdminDelivery {
  id: string;
  taskId: string;
  attempt: number;
  url: string;
  event: string;
  status: 'delivered' | 'failed';
  httpStatus: number | null;
  error: string | null;
  durationMs: number;
  at: string;
  state: DeliveryState;
}

export interface DeliveryRetry {
  id: string;
  taskId: string;
  queued: boolean;
  runAt: string;
}

/** GET /admin/v1/audit. `before` and `after` are plain JSON, never secrets. */
export interface AuditEntry {
  id: string;
  at: string;
  actor: { type: 'admin' | 'operator' | 'user' | 'system'; id: string | null; ip: string | null };
  action: string;
  target: { type: string; id: string | null };
  before: unknown;
  after: unknown;
  orgId: string | null;
}

/** GET /admin/v1/providers: never the API key, only whether one is set. */
/** A channel's health in the gateway process that answered (DESIGN §12). */
export interface AdminChannelHealth {
  state: 'healthy' | 'cooling' | 'probing';
  requests: number;
  errors: number;
  /** Failed share of the last 256 attempts, 0..1. */
  errorRate: number;
  latencyMs: { p50: number | null; p99: number | null };
  /** ISO time a cooling channel may be tried again. */
  coolingUntil: string | null;
}

/** One way to reach a provider: base URL and key (never shown), weight, priority, the models it serves (null: all). */
export interface AdminChannel {
  id: string;
  baseUrl: string;
  hasApiKey: boolean;
  weight: number;
  priority: number;
  models: string[] | null;
  health?: AdminChannelHealth;
}

/** GET /admin/v1/providers: `baseUrl` and `hasApiKey` are the first channel's. */
export interface AdminProvider {
  id: string;
  type: 'openai' | 'anthropic';
  baseUrl: string | null;
  hasApiKey: boolean;
  channels: AdminChannel[];
}

/** POST /admin/v1/users/:id/password-reset. */
export interface ResetLink {
  url: string;
  expiresAt: string;
}
