import type { ChatUsage, JsonObject } from '../../core/chat-types.ts';
import type { TokenUsage } from '../billing/pricing.ts';

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);

/**
 * Reads OpenAI-format usage. `prompt_tokens` includes cached tokens (`prompt_tokens_details.cached_tokens`) and, from the
 * Anthropic adapter, cache writes (`cache_creation_input_tokens`); each is priced at its own rate.
 */
export function tokenUsageFromChat(usage: ChatUsage | JsonObject | null | undefined): TokenUsage {
  const details = (usage?.prompt_tokens_details ?? {}) as JsonObject;
  const cacheRead = count(details.cached_tokens);
  const cacheWrite1h = count(usage?.cache_creation_1h_input_tokens);
  const cacheWrite = Math.max(0, count(usage?.cache_creation_input_tokens) - cacheWrite1h);
  const prompt = count(usage?.prompt_tokens);
  return {
    inputTokens: Math.max(0, prompt - cacheRead - cacheWrite - cacheWrite1h),
    outputTokens: count(usage?.completion_tokens),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    cacheWrite1hTokens: cacheWrite1h,
  };
}
