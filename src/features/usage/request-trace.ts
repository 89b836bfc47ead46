import type { Money } from '../../lib/money.ts';
import type { UpstreamRoute } from '../../providers/channels/upstream-route.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { TokenUsage } from '../billing/pricing.ts';
import type { Model } from '../catalog/model.ts';
import type { Resolution } from '../catalog/retirement.ts';
import type { ApiKey } from '../keys/keys.ts';

/** How the response ended, taken at its close. `key` is absent for requests without an API key (they are not logged). */
export interface TraceEnding {
  key: ApiKey | undefined;
  endpoint: string;
  /** The model the body named, when the request never resolved one. */
  bodyModel: string | undefined;
  status: number;
  latencyMs: number;
}

/**
 * What one request did, collected while it runs: the model it resolved to, the tokens and cost it was charged, the first
 * frame of a stream, and how it ended. It is settled — and `onSettled` runs, once — when the response has closed AND no
 * part of the request still holds it (the handler, whose stream relay books its charge in a `finally` that may run after
 * the close). Plain fields and counters: it is on every request's path.
 */
export class RequestTrace {
  resolution: Resolution | undefined;
  payer: AccountRef | undefined;
  /** Where the vendor calls went: provider, channel, attempts (absent when none was routed). */
  route: UpstreamRoute | undefined;
  inputTokens = 0;
  outputTokens = 0;
  cacheReadTokens = 0;
  cacheWriteTokens = 0;
  /** Σ of the charge entries booked with this request's id (positive nano-units). */
  cost: Money = 0n;
  /** A charge was priced (possibly at zero): the response owes `x-tollgate-cost`. */
  billed = false;
  stream = false;
  /** Milliseconds from the start to the first frame of a stream. */
  ttftMs: number | null = null;
  errorType: string | null = null;
  taskId: string | null = null;
  /**
   * The key a request outside the model endpoints spends as (the management API's knowledge door: a management key, or a
   * session's console key): its row is logged under it, so the request log and usage hold every charge.
   */
  spender: ApiKey | undefined = undefined;
  ending: TraceEnding | undefined;
  private holds = 0;
  private closed = false;
  private settled = false;

  constructor(
    readonly id: string,
    /** Unix ms (the injected clock): the row's `created`. */
    readonly created: number,
    /** performance.now() at the start: latencies. */
    readonly startedAt: number,
    private readonly onSettled: (trace: RequestTrace) => void,
  ) {}

  resolved(resolution: Resolution, payer: AccountRef): void {
    this.resolution = resolution;
    this.payer = payer;
  }

  /**
   * A charge made without a model call's resolution (a knowledge document's embeddings): who pays, and the model priced, so
   * the row names it as the ledger entry does (a request that did resolve a model keeps that one).
   */
  chargedFor(model: Model, payer: AccountRef): void {
    this.resolution ??= { requested: model, served: model, billed: model, headers: {}, warning: null };
    this.payer = payer;
  }

  /** Tokens of one priced charge (several add up: an assistant's turns). */
  used(tokens: TokenUsage): void {
    this.billed = true;
    this.inputTokens += tokens.inputTokens;
    this.outputTokens += tokens.outputTokens;
    this.cacheReadTokens += tokens.cacheReadTokens;
    this.cacheWriteTokens += tokens.cacheWriteTokens + tokens.cacheWrite1hTokens;
  }

  /** A ledger charge with this request's id; `amount` is the entry's (negative) amount. */
  charged(amount: Money): void {
    this.billed = true;
    this.cost -= amount;
  }

  firstFrame(now: number): void {
    if (this.ttftMs === null) this.ttftMs = Math.max(0, Math.round(now - this.startedAt));
  }

  failed(errorType: string): void {
    this.errorType ??= errorType;
  }

  /** Some part of the request may still book a charge: settling waits for `release`. */
  hold(): void {
    this.holds += 1;
  }

  release(): void {
    this.holds -= 1;
    this.settleIfDone();
  }

  /** The response closed (finished or cut off). */
  close(ending: TraceEnding): void {
    this.ending = ending;
    this.closed = true;
    this.settleIfDone();
  }

  private settleIfDone(): void {
    if (this.settled || !this.closed || this.holds > 0) return;
    this.settled = true;
    this.onSettled(this);
  }
}
