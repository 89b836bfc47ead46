import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';

/** One authenticated request as the log keeps it (DESIGN §10). Times are Unix ms; `cost` is what the ledger charged. */
export interface RequestLogRow {
  /** The request id (x-request-id). */
  id: string;
  created: number;
  /** Who paid: the key's org, or its user (also with `useWalletBalance`). Views and rollups are per payer. */
  account: AccountRef;
  keyId: string;
  userId: string;
  orgId: string | null;
  /** The route's name (`chat.completions`, `messages`, …). */
  endpoint: string;
  /** The model the client asked for; null when the request named none. */
  model: string | null;
  servedModel: string | null;
  provider: string | null;
  channel: string | null;
  attempts: number;
  stream: boolean;
  status: number;
  errorType: string | null;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Σ of the ledger's charge entries with this request id (nano-units, positive). */
  cost: Money;
  latencyMs: number;
  /** Until the first frame of a stream; null for other responses. */
  ttftMs: number | null;
  /** The task this request created, if any. */
  taskId: string | null;
}

/**
 * A later change of a request's cost (a failed task's refund, a transcription's correction): it moves the cost of the
 * rollup the request counted in, found through the task id, and leaves the log row as charged. It is written in the task's
 * own refund transaction (storage/tasks-repository.ts), keyed by the ledger entry's id, so it is neither lost in a crash
 * nor counted twice. When the request's row is not written yet it waits (table usage_adjustments) and the request-log
 * writer applies it with the row. When the row is gone because the task is older than the log keeps rows, it counts on the
 * `fallback` rollup (the day it happened).
 */
export interface CostAdjustment {
  /** The id of the ledger entry (refund or further charge) this adjustment mirrors. */
  id: string;
  taskId: string;
  /** Cost delta in nano-units: negative for a refund, positive for a further charge. */
  cost: Money;
  /** When the adjustment happened (Unix ms). */
  at: number;
  /** When the task (so the request that created it) was made (Unix ms). */
  requestAt: number;
  /** The retention cutoff now (Unix ms): a request made before it has no row any more. */
  rowsKeptFrom: number;
  fallback: { account: AccountRef; day: string; model: string; keyId: string; userId: string; endpoint: string };
}

export type UsageDimension = 'day' | 'model' | 'key' | 'endpoint';

export interface UsageRow {
  day?: string;
  model?: string | null;
  keyId?: string;
  endpoint?: string;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  cost: Money;
}

/** Whose rows a query reads: one account (optionally only one user's requests in it), or — for the admin — any. */
export interface LogScope {
  account?: AccountRef;
  userId?: string;
}

export interface RequestsQuery extends LogScope {
  limit: number;
  /** Rows strictly older than this position (newest first). */
  before?: { created: number; id: string };
  keyId?: string;
  model?: string;
  status?: number;
  from?: number;
  to?: number;
}

export interface UsageQuery extends LogScope {
  /** Inclusive, YYYY-MM-DD (UTC). */
  from: string;
  to: string;
  groupBy: readonly UsageDimension[];
}

export interface RequestLogRepository {
  /**
   * Writes rows (a row already written is skipped) and moves the daily rollups by exactly what was written, together with
   * the waiting adjustments of the tasks those rows created, in one transaction.
   */
  append(rows: readonly RequestLogRow[]): Promise<void>;
  requests(query: RequestsQuery): Promise<RequestLogRow[]>;
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /**
   * Deletes (SQLite) or drops the partitions of (PostgreSQL) rows created before `cutoff`, prepares the partitions of the
   * days around `now`, and drops adjustments that waited since before `cutoff` for a row that never came (lost in a crash:
   * as the row's charge is missing from the rollups, so is its refund).
   */
  maintain(now: number, cutoff: number): Promise<void>;
}

/** The UTC day of a time, as YYYY-MM-DD. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
