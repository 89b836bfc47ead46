import { GatewayError } from '../../core/errors.ts';
import { formatMoney, type Money } from '../../lib/money.ts';
import type { RateDecision, RateLimiter, WindowUsage } from '../../storage/rate-limiter.ts';
import type { ApiKey } from './keys.ts';
import type { KeySpendBook } from './key-spend.ts';

const tokensCounter = (keyId: string): string => `tpm:${keyId}`;

/** What a key may still spend in its period, and what it spent; `remaining` is null without a limit. */
export interface KeySpending {
  spent: Money;
  remaining: Money | null;
}

/**
 * A key's own limits (DESIGN §10 "Key limits"), apart from expiry and disabling (which `isLive` decides): requests and tokens
 * per minute, counted by the rate limiter (Redis when several processes serve, so they share the counts), and spend per UTC
 * calendar period, kept by the spend book. Every check runs before the vendor is called, so a refused call costs nothing.
 */
export class KeyLimits {
  constructor(
    private readonly limiter: RateLimiter,
    readonly spend: KeySpendBook,
  ) {}

  /**
   * On every request made with the key (count_tokens and free endpoints too): its requests and tokens per minute. No promise
   * when the counters are in this process's memory (no Redis): it runs on every request.
   */
  admit(key: ApiKey): void | Promise<void> {
    if (key.rateLimit === null) return this.admitTokens(key);
    const decision = this.limiter.take(key.id, key.rateLimit);
    if (decision instanceof Promise) return decision.then((taken) => this.afterRequestCount(key, taken));
    return this.afterRequestCount(key, decision);
  }

  private afterRequestCount(key: ApiKey, decision: RateDecision): void | Promise<void> {
    if (!decision.allowed) {
      throw new GatewayError('rate_limited', `Rate limit of ${key.rateLimit} requests per minute reached for this API key.`, {
        codeA: 'rate_limit_exceeded',
        retryAfterMs: decision.retryAfterMs,
      });
    }
    return this.admitTokens(key);
  }

  /** Tokens are known only when a call finishes: a call is refused while the minute's budget is used up. */
  private admitTokens(key: ApiKey): void | Promise<void> {
    if (key.tpm === null) return;
    const usage = this.limiter.usage(tokensCounter(key.id));
    if (usage instanceof Promise) return usage.then((used) => this.checkTokens(key, used));
    this.checkTokens(key, usage);
  }

  private checkTokens(key: ApiKey, usage: WindowUsage): void {
    if (usage.used >= (key.tpm ?? Number.POSITIVE_INFINITY)) {
      throw new GatewayError('rate_limited', `Rate limit of ${key.tpm} tokens per minute reached for this API key.`, {
        codeA: 'rate_limit_exceeded',
        retryAfterMs: usage.resetsInMs,
      });
    }
  }

  /** Before a billed model call: the key has not spent its limit for the period (402 `key_limit_exceeded`). No promise when the spend is known. */
  checkSpend(key: ApiKey): void | Promise<void> {
    if (!key.limit) return;
    const spent = this.spend.spent(key);
    if (typeof spent === 'bigint') return this.checkSpent(key, spent);
    return spent.then((known) => this.checkSpent(key, known));
  }

  private checkSpent(key: ApiKey, spent: Money): void {
    const limit = key.limit;
    if (!limit || spent < limit.amount) return;
    const period = limit.period === 'total' ? 'in total' : `this ${limit.period} (UTC)`;
    throw new GatewayError('insufficient_balance', `This API key has reached its spend limit of ${formatMoney(limit.amount)} ${period}.`, {
      codeA: 'key_limit_exceeded',
    });
  }

  /** Counts a finished call's tokens against the key's minute (off the request path; a lost count only loosens the limit). */
  countTokens(key: ApiKey, tokens: number): void {
    if (key.tpm === null || tokens <= 0) return;
    void Promise.resolve(this.limiter.add(tokensCounter(key.id), tokens)).catch(() => undefined);
  }

  async spending(key: ApiKey): Promise<KeySpending> {
    const spent = await this.spend.spent(key);
    if (!key.limit) return { spent, remaining: null };
    return { spent, remaining: spent >= key.limit.amount ? 0n : key.limit.amount - spent };
  }
}
