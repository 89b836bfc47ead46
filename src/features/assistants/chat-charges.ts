import { NANOS_PER_MICRO, roundTo, toUsageNumber, type Money } from '../../lib/money.ts';
import type { Cost, TokenUsage } from '../billing/pricing.ts';

/**
 * Everything one assistant chat turn costs: each model round and each embedding a tool made, summed exactly,
 * charged as one ledger entry, and shown as SPEC 2.5's `usage`.
 */
export class ChatCharges {
  promptTokens = 0;
  completionTokens = 0;
  embeddingTokens = 0;
  promptCost: Money = 0n;
  completionCost: Money = 0n;
  embeddingCost: Money = 0n;

  addModelRound(usage: TokenUsage, cost: Cost): void {
    this.promptTokens += usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens + usage.cacheWrite1hTokens;
    this.completionTokens += usage.outputTokens;
    this.promptCost += cost.prompt;
    this.completionCost += cost.completion;
  }

  addEmbedding(tokens: number, cost: Money): void {
    this.embeddingTokens += tokens;
    this.embeddingCost += roundTo(cost, NANOS_PER_MICRO);
  }

  get total(): Money {
    return this.promptCost + this.completionCost + this.embeddingCost;
  }

  usage(contextMessages: number): Record<string, number> {
    return {
      context_messages: contextMessages,
      prompt_tokens: this.promptTokens,
      completion_tokens: this.completionTokens,
      embedding_tokens: this.embeddingTokens,
      total_tokens: this.promptTokens + this.completionTokens + this.embeddingTokens,
      prompt_cost: toUsageNumber(this.promptCost),
      completion_cost: toUsageNumber(this.completionCost),
      embedding_cost: toUsageNumber(this.embeddingCost),
      total_cost: toUsageNumber(this.total),
    };
  }
}
