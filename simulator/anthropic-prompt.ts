// Prompt accounting of Anthropic messages: input tokens and prompt caching.
//
// The prompt is a list of parts in cache order: each tool, each system block (a string system is one
// text block), each content block of each message (string content is one text block). Part tokens:
// tool → countTokens(JSON of the tool without cache_control); text → countTokens(text); image → 85;
// document → countTokens(source.data) for a text source, 85 otherwise; tool_use → countTokens(JSON of
// input); tool_result → its string content, or Σ of its blocks; thinking → countTokens(thinking);
// redacted_thinking → countTokens(data); any other block → countTokens(JSON of it without cache_control).
//
// Caching: a part with `cache_control` is a breakpoint; a top-level `cache_control` marks the last part.
// The prefix ending at each breakpoint is hashed (model + parts without cache_control). The longest
// breakpoint prefix seen before is read (cache_read_input_tokens = its tokens); the parts after it up to
// the last breakpoint are written (cache_creation_input_tokens), each counted under the TTL of the
// breakpoint that closes its segment ("1h" → ephemeral_1h, otherwise 5m). input_tokens = the rest.
// Every breakpoint prefix of a served /v1/messages request is remembered; count_tokens remembers nothing.

import type { Hash } from 'node:crypto';
import { isRecord, type JsonRecord } from './json-narrow.ts';
import { prefixDigest, startPrefixHash, type PromptCache } from './prompt-cache.ts';
import { countTokens, IMAGE_TOKENS } from './text.ts';

export interface PromptPart {
  tokens: number;
  /** The JSON value the cache hashes (set for every part; serialised only when breakpoints exist). */
  block: unknown;
  /** Breakpoint TTL when the part carries cache_control. */
  ttl: '5m' | '1h' | undefined;
}

function withoutCacheControl(value: unknown): unknown {
  if (!isRecord(value) || !('cache_control' in value)) return value;
  const { cache_control: _ignored, ...rest } = value;
  return rest;
}

function ttlOf(block: unknown): '5m' | '1h' | undefined {
  if (!isRecord(block) || !isRecord(block.cache_control)) return undefined;
  return block.cache_control.ttl === '1h' ? '1h' : '5m';
}

export function anthropicBlockTokens(block: unknown): number {
  if (!isRecord(block)) return 0;
  switch (block.type) {
    case 'text': return typeof block.text === 'string' ? countTokens(block.text) : 0;
    case 'image': return IMAGE_TOKENS;
    case 'document': {
      const source = isRecord(block.source) ? block.source : {};
      return source.type === 'text' && typeof source.data === 'string' ? countTokens(source.data) : IMAGE_TOKENS;
    }
    case 'tool_use': return countTokens(JSON.stringify(block.input ?? {}));
    case 'tool_result': {
      const content = block.content;
      if (typeof content === 'string') return countTokens(content);
      return Array.isArray(content) ? content.reduce((sum: number, inner) => sum + anthropicBlockTokens(inner), 0) : 0;
    }
    case 'thinking': return typeof block.thinking === 'string' ? countTokens(block.thinking) : 0;
    case 'redacted_thinking': return typeof block.data === 'string' ? countTokens(block.data) : 0;
    default: return countTokens(JSON.stringify(withoutCacheControl(block)));
  }
}

function textPart(text: string): PromptPart {
  return { tokens: countTokens(text), block: { type: 'text', text }, ttl: undefined };
}

/** The prompt's parts in cache order (see the rule at the top of this file). */
export function anthropicPromptParts(body: JsonRecord): PromptPart[] {
  const parts: PromptPart[] = [];
  if (Array.isArray(body.tools)) {
    for (const tool of body.tools) {
      const stripped = withoutCacheControl(tool);
      parts.push({ tokens: countTokens(JSON.stringify(stripped)), block: stripped, ttl: ttlOf(tool) });
    }
  }
  if (typeof body.system === 'string') parts.push(textPart(body.system));
  else if (Array.isArray(body.system)) {
    for (const block of body.system) parts.push({ tokens: anthropicBlockTokens(block), block, ttl: ttlOf(block) });
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    // The role is part of the hashed prefix: the same text as a user or an assistant turn is a different prompt.
    parts.push({ tokens: 0, block: message.role, ttl: undefined });
    if (typeof message.content === 'string') parts.push(textPart(message.content));
    else if (Array.isArray(message.content)) {
      for (const block of message.content) parts.push({ tokens: anthropicBlockTokens(block), block, ttl: ttlOf(block) });
    }
  }
  if (isRecord(body.cache_control)) {
    const last = [...parts].reverse().find((part) => part.tokens > 0 || isRecord(part.block));
    if (last !== undefined && last.ttl === undefined) last.ttl = body.cache_control.ttl === '1h' ? '1h' : '5m';
  }
  return parts;
}

/** Total prompt tokens = input_tokens + cache_creation_input_tokens + cache_read_input_tokens. */
export function anthropicPromptTokens(body: JsonRecord): number {
  return anthropicPromptParts(body).reduce((sum, part) => sum + part.tokens, 0);
}

export interface AnthropicCacheUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
}

/** Splits the prompt into uncached, written and read tokens, and remembers the breakpoint prefixes. */
export function anthropicCacheUsage(cache: PromptCache, model: string, parts: readonly PromptPart[]): AnthropicCacheUsage {
  const total = parts.reduce((sum, part) => sum + part.tokens, 0);
  const breakpoints: number[] = [];
  parts.forEach((part, index) => {
    if (part.ttl !== undefined) breakpoints.push(index);
  });
  const usage: AnthropicCacheUsage = {
    input_tokens: total,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
  };
  if (breakpoints.length === 0) return usage;
  const digests = breakpointDigests(startPrefixHash(model), parts, breakpoints);
  let readEnd = 0;
  digests.forEach((digest, index) => {
    if (cache.has(digest)) readEnd = (breakpoints[index] ?? -1) + 1;
  });
  let position = 0;
  for (const breakpoint of breakpoints) {
    let segment = 0;
    for (; position <= breakpoint; position += 1) segment += parts[position]?.tokens ?? 0;
    if (breakpoint < readEnd) usage.cache_read_input_tokens += segment;
    else if (parts[breakpoint]?.ttl === '1h') usage.cache_creation.ephemeral_1h_input_tokens += segment;
    else usage.cache_creation.ephemeral_5m_input_tokens += segment;
  }
  usage.cache_creation_input_tokens = usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens;
  usage.input_tokens = total - usage.cache_creation_input_tokens - usage.cache_read_input_tokens;
  for (const digest of digests) cache.remember(digest);
  return usage;
}

function breakpointDigests(hash: Hash, parts: readonly PromptPart[], breakpoints: readonly number[]): string[] {
  const digests: string[] = [];
  let next = 0;
  parts.forEach((part, index) => {
    hash.update(JSON.stringify(withoutCacheControl(part.block))).update('\u0000');
    if (index === breakpoints[next]) {
      digests.push(prefixDigest(hash));
      next += 1;
    }
  });
  return digests;
}
