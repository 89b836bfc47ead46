// Prompt accounting of OpenAI chat completions: prompt tokens, the last user text and prompt caching.
//
// Prompt tokens = Σ over messages of: string content → countTokens(content); array content → per part
// (text → countTokens(text), image_url → 85, other parts → countTokens(JSON of the part)); plus
// countTokens(JSON of tool_calls) for assistant messages that carry them; plus countTokens(JSON of `tools`)
// when tools are given. Roles and names cost nothing.
//
// Caching: every request remembers the hash of each of its message prefixes (model + messages[0..k]).
// When a request's prompt is ≥ 1024 tokens and its prefix without the last message was remembered
// before, cached_tokens = floor(tokens of that prefix / 128) × 128; otherwise 0.

import { isRecord, type JsonRecord } from './json-narrow.ts';
import { prefixDigest, startPrefixHash, type PromptCache } from './prompt-cache.ts';
import { countTokens, IMAGE_TOKENS } from './text.ts';

export const OPENAI_CACHE_MIN_PROMPT_TOKENS = 1024;
export const OPENAI_CACHE_BLOCK_TOKENS = 128;

export function openAiContentTokens(content: unknown): number {
  if (typeof content === 'string') return countTokens(content);
  if (!Array.isArray(content)) return 0;
  let tokens = 0;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') tokens += countTokens(part.text);
    else if (part.type === 'image_url') tokens += IMAGE_TOKENS;
    else tokens += countTokens(JSON.stringify(part));
  }
  return tokens;
}

export function openAiMessageTokens(message: unknown): number {
  if (!isRecord(message)) return 0;
  let tokens = openAiContentTokens(message.content);
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) tokens += countTokens(JSON.stringify(message.tool_calls));
  return tokens;
}

export function openAiToolsTokens(tools: unknown): number {
  return Array.isArray(tools) && tools.length > 0 ? countTokens(JSON.stringify(tools)) : 0;
}

/** Prompt tokens of a chat-completions body (see the rule at the top of this file). */
export function openAiPromptTokens(body: JsonRecord): number {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let tokens = openAiToolsTokens(body.tools);
  for (const message of messages) tokens += openAiMessageTokens(message);
  return tokens;
}

/** Text of a message's content: the string, or its text parts joined with "\n". */
export function openAiContentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join('\n');
}

/** Text of the last `user` message ("" when there is none). */
export function openAiLastUserText(messages: readonly unknown[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (isRecord(message) && message.role === 'user') return openAiContentText(message.content);
  }
  return '';
}

/**
 * cached_tokens for this request, and remembers its prefixes for later requests.
 * `messageTokens[i]` is openAiMessageTokens(messages[i]).
 */
export function openAiCachedTokens(
  cache: PromptCache,
  model: string,
  messages: readonly unknown[],
  messageTokens: readonly number[],
  promptTokens: number,
): number {
  const hash = startPrefixHash(model);
  const digests: string[] = [];
  let prefixTokens = 0;
  for (let index = 0; index < messages.length; index += 1) {
    hash.update(JSON.stringify(messages[index])).update('\u0000');
    digests.push(prefixDigest(hash));
    if (index < messages.length - 1) prefixTokens += messageTokens[index] ?? 0;
  }
  const prefix = digests[messages.length - 2];
  const hit = prefix !== undefined && promptTokens >= OPENAI_CACHE_MIN_PROMPT_TOKENS && cache.has(prefix);
  for (const digest of digests) cache.remember(digest);
  const cached = hit ? Math.floor(prefixTokens / OPENAI_CACHE_BLOCK_TOKENS) * OPENAI_CACHE_BLOCK_TOKENS : 0;
  return cached;
}
