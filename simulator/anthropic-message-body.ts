// The Anthropic `Message` object (PROTOCOLS 1.7) and the vendor-like ids.

import type { AnthropicCacheUsage } from './anthropic-prompt.ts';
import type { AnthropicBlock, AnthropicReply } from './anthropic-reply.ts';

export interface AnthropicUsage extends AnthropicCacheUsage {
  output_tokens: number;
  server_tool_use: null;
  service_tier: 'standard';
  inference_geo: null;
  output_tokens_details: null;
}

export interface MessagePlan {
  id: string;
  model: string;
  reply: AnthropicReply;
  usage: AnthropicUsage;
}

/** Message ids look like the vendor's: `msg_01` followed by 22 characters. */
export function anthropicId(prefix: string, sequence: number): string {
  return `${prefix}_01Sim${String(sequence).padStart(19, '0')}`;
}

export function messageBody(plan: MessagePlan, content: readonly AnthropicBlock[], usage: AnthropicUsage, final = true): Record<string, unknown> {
  return {
    id: plan.id,
    type: 'message',
    role: 'assistant',
    model: plan.model,
    content,
    stop_reason: final ? plan.reply.stopReason : null,
    stop_sequence: final ? plan.reply.stopSequence : null,
    stop_details: null,
    container: null,
    usage,
  };
}

