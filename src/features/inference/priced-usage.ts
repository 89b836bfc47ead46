import type { ChatUsage } from '../../core/chat-types.ts';
import { extended } from '../../lib/objects.ts';
import { costNumbers, type Cost } from '../billing/pricing.ts';

/** A usage block as the gateway returns it: the vendor's counts plus what they cost. */
export type PricedUsage = ChatUsage & { prompt_cost: number; completion_cost: number; total_cost: number };

export const withCosts = (usage: ChatUsage, cost: Cost): PricedUsage => extended(usage, costNumbers(cost));

/**
 * `JSON.stringify(withCosts(usage, cost))` made from the vendor's own usage text (`usage` is that text parsed): the costs
 * are written in before its closing brace instead of serialising the object again (issue 16: ~2 µs of a chat call). A
 * usage that already has a field named like a cost is serialised, so the gateway's value replaces the vendor's.
 */
export function pricedUsageText(text: string, usage: ChatUsage, cost: Cost): string {
  const close = text.lastIndexOf('}');
  if (close === -1 || 'prompt_cost' in usage || 'completion_cost' in usage || 'total_cost' in usage) return JSON.stringify(withCosts(usage, cost));
  const { prompt_cost, completion_cost, total_cost } = costNumbers(cost);
  const costs = `"prompt_cost":${prompt_cost},"completion_cost":${completion_cost},"total_cost":${total_cost}}`;
  return `${text.slice(0, close)}${hasFields(usage) ? ',' : ''}${costs}`;
}

function hasFields(object: object): boolean {
  for (const _ in object) return true;
  return false;
}
