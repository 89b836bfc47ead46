import type { ChatMessage, ChatResponse, ChatUsage, JsonObject, ThinkingBlock } from '../../core/chat-types.ts';
import type { AnthropicMessage, AnthropicUsage } from './anthropic-api-schemas.ts';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';

/** Counts as they accumulate over a stream: every field optional (a `message_delta` may repeat any of them). */
export type AnthropicUsageCounts = Partial<AnthropicUsage>;

const count = (value: number | null | undefined): number => value ?? 0;

/**
 * Anthropic usage in the OpenAI format. Anthropic's `input_tokens` leaves out cache reads and writes; OpenAI's
 * `prompt_tokens` includes cached tokens, and the gateway's pricing (features/inference/usage.ts) subtracts the cache
 * reads (`prompt_tokens_details.cached_tokens`) and writes (`cache_creation_input_tokens`, of which
 * `cache_creation_1h_input_tokens` are the 1-hour ones) back out to price each kind. So all three are added in.
 */
export function convertAnthropicUsage(usage: AnthropicUsageCounts): ChatUsage {
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const cacheWrite1h = count(usage.cache_creation?.ephemeral_1h_input_tokens);
  const prompt = count(usage.input_tokens) + cacheRead + cacheWrite;
  const completion = count(usage.output_tokens);
  const converted: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead },
  };
  if (cacheWrite > 0) converted.cache_creation_input_tokens = cacheWrite;
  if (cacheWrite1h > 0) converted.cache_creation_1h_input_tokens = cacheWrite1h;
  return converted;
}

/**
 * An Anthropic `Message` as an OpenAI chat completion. Text blocks are joined into `content`; tool_use blocks become
 * `tool_calls` with their input as a JSON string; thinking and server-tool blocks have no OpenAI form and are dropped.
 * The vendor's message id is kept (`msg_…`) so a call can be traced in the vendor's logs. With `reasoning` (the request
 * asked for thinking: the Responses path) thinking blocks are kept as `reasoning_content` and `thinking_blocks`.
 */
export function convertFromAnthropicResponse(message: AnthropicMessage, createdSeconds: number, reasoning = false): ChatResponse {
  let text = '';
  const toolCalls: JsonObject[] = [];
  const thinking: ThinkingBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') text += block.text;
    else if (block.type === 'thinking') thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' });
    else if (block.type === 'tool_use') {
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const reply: ChatMessage = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text, refusal: null };
  if (toolCalls.length > 0) reply.tool_calls = toolCalls;
  if (reasoning && thinking.length > 0) {
    reply.reasoning_content = thinking.map((block) => block.thinking).join('');
    reply.thinking_blocks = thinking;
  }
  return {
    id: message.id,
    object: 'chat.completion',
    created: createdSeconds,
    model: message.model,
    choices: [{ index: 0, message: reply, logprobs: null, finish_reason: mapAnthropicFinishReason(message.stop_reason) }],
    usage: convertAnthropicUsage(message.usage),
  };
}
