import { GatewayError } from '../../core/errors.ts';
import { formatMoney, type Money } from '../../lib/money.ts';
import type { RateLimiter } from '../../storage/rate-limiter.ts';
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

  /** On every request made with the key (count_tokens and free endpoints too): its requests and tokens per minute. */
  async admit(key: ApiKey): Promise<void> {
    if (key.rateLimit !== null) {
      const decision = await this.limiter.take(key.id, key.rateLimit);
      if (!decision.allowed) {
        throw new GatewayError('rate_limited', `Rate limit of ${key.rateLimit} requests per minute reached for this API key.`, {
          codeA: 'rate_limit_exceeded',
          retryAfterMs: decision.retryAfterMs,
        });
      }
    }
    if (key.tpm !== null) {
      // Tokens are known only when a call finishes: a call is refused while the minute's budget is used up.
      const usage = await this.limiter.usage(tokensCounter(key.id));
      if (usage.used >= key.tpm) {
        throw new GatewayError('rate_limited', `Rate limit of ${key.tpm} tokens per minute reached for this API key.`, {
          codeA: 'rate_limit_exceeded',
          retryAfterMs: usage.resetsInMs,
        });
      }
    }
  }

  /** Before a billed model call: the key has not spent its limit for the period (402 `key_limit_exceeded`). */
  async checkSpend(key: ApiKey): Promise<void> {
    if (!key.limit) return;
    const spent = await this.spend.spent(key);
    if (spent >= key.limit.amount) {
      const period = key.limit.period === 'total' ? 'in total' : `this ${key.limit.period} (UTC)`;
      throw new GatewayError('insufficient_balance', `This API key has reached its spend limit of ${formatMoney(key.limit.amount)} ${period}.`, {
        codeA: 'key_limit_exceeded',
      });
    }
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
