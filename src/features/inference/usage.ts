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

/**
 * Reads Anthropic usage (`message_start.message.usage` merged with the cumulative `message_delta.usage`): `input_tokens`
 * excludes cached tokens; writes are split by lifetime when the vendor says so (`cache_creation.ephemeral_*`).
 */
export function tokenUsageFromAnthropic(usage: JsonObject | null | undefined): TokenUsage {
  const creation = (usage?.cache_creation ?? null) as JsonObject | null;
  const written = count(usage?.cache_creation_input_tokens);
  const written1h = creation ? count(creation.ephemeral_1h_input_tokens) : 0;
  return {
    inputTokens: count(usage?.input_tokens),
    outputTokens: count(usage?.output_tokens),
    cacheReadTokens: count(usage?.cache_read_input_tokens),
    cacheWriteTokens: Math.max(0, written - written1h),
    cacheWrite1hTokens: written1h,
  };
}

/**
 * Reads Responses API usage: `input_tokens` includes the cached ones (`input_tokens_details.cached_tokens`, priced as
 * cache reads); `output_tokens` includes reasoning tokens (`output_tokens_details.reasoning_tokens`), priced as output.
 */
export function tokenUsageFromResponses(usage: JsonObject | null | undefined): TokenUsage {
  const cached = count(((usage?.input_tokens_details ?? {}) as JsonObject).cached_tokens);
  const input = count(usage?.input_tokens);
  return {
    inputTokens: Math.max(0, input - cached),
    outputTokens: count(usage?.output_tokens),
    cacheReadTokens: Math.min(cached, input),
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
  };
}
