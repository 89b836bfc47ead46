import type { ChatUsage } from '../../core/chat-types.ts';
import { costNumbers, type Cost } from '../billing/pricing.ts';

/** A usage block as the gateway returns it: the vendor's counts plus what they cost. */
export type PricedUsage = ChatUsage & { prompt_cost: number; completion_cost: number; total_cost: number };

export const withCosts = (usage: ChatUsage, cost: Cost): PricedUsage => ({ ...usage, ...costNumbers(cost) });
