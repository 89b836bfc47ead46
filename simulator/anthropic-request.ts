// Validation of Anthropic messages and count_tokens bodies, with the vendor's pydantic-style messages.

import { isRecord, type JsonRecord } from './json-narrow.ts';

export const CREATE_FIELDS: ReadonlySet<string> = new Set([
  'model', 'max_tokens', 'messages', 'system', 'metadata', 'stream', 'stop_sequences', 'temperature', 'top_p', 'top_k',
  'tools', 'tool_choice', 'thinking', 'output_config', 'service_tier', 'cache_control', 'container', 'inference_geo',
  'context_management', 'mcp_servers', 'speed',
]);

/** count_tokens takes the create inputs minus max_tokens, stream, metadata, stop_sequences, sampling and service tier (PROTOCOLS 1.10). */
export const COUNT_TOKENS_FIELDS: ReadonlySet<string> = new Set([
  'model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'output_config', 'cache_control', 'context_management', 'mcp_servers',
]);

export const MAX_CACHE_BREAKPOINTS = 4;

export interface MessagesRequest {
  body: JsonRecord;
  model: string;
  /** undefined for count_tokens. */
  maxTokens: number | undefined;
  messages: JsonRecord[];
}

/** A valid request, or the message of a 400 `invalid_request_error`. */
export function parseMessagesRequest(body: unknown, countTokens: boolean): MessagesRequest | string {
  if (!isRecord(body)) return 'Input should be a valid dictionary';
  const allowed = countTokens ? COUNT_TOKENS_FIELDS : CREATE_FIELDS;
  for (const field in body) if (!allowed.has(field)) return `${field}: Extra inputs are not permitted`;
  if (body.model === undefined) return 'model: Field required';
  if (typeof body.model !== 'string') return 'model: Input should be a valid string';
  let maxTokens: number | undefined;
  if (!countTokens) {
    if (body.max_tokens === undefined) return 'max_tokens: Field required';
    if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens)) return 'max_tokens: Input should be a valid integer';
    if (body.max_tokens < 0) return 'max_tokens: Input should be greater than or equal to 0';
    maxTokens = body.max_tokens;
  }
  if (body.messages === undefined) return 'messages: Field required';
  if (!Array.isArray(body.messages)) return 'messages: Input should be a valid list';
  if (body.messages.length === 0) return 'messages: List should have at least 1 item after validation, not 0';
  const messageError = checkMessages(body.messages);
  if (messageError !== undefined) return messageError;
  const otherError = checkMetadata(body) ?? checkSystem(body.system) ?? checkThinking(body, maxTokens) ?? checkBreakpoints(body);
  if (otherError !== undefined) return otherError;
  return { body, model: body.model, maxTokens, messages: body.messages as JsonRecord[] };
}

function checkMessages(messages: unknown[]): string | undefined {
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index];
    if (!isRecord(message)) return `messages.${index}: Input should be a valid dictionary`;
    if (message.role === undefined) return `messages.${index}.role: Field required`;
    if (message.role !== 'user' && message.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (message.content === undefined) return `messages.${index}.content: Field required`;
    if (typeof message.content !== 'string' && !Array.isArray(message.content)) return `messages.${index}.content: Input should be a valid list`;
    if (Array.isArray(message.content)) {
      const blockIndex = message.content.findIndex((block) => !isRecord(block) || typeof block.type !== 'string');
      if (blockIndex >= 0) return `messages.${index}.content.${blockIndex}: Input should be a valid dictionary or object to extract fields from`;
    }
  }
  return undefined;
}

function checkMetadata(body: JsonRecord): string | undefined {
  const metadata = body.metadata;
  if (metadata === undefined || metadata === null) return undefined;
  if (!isRecord(metadata)) return 'metadata: Input should be a valid dictionary or object to extract fields from';
  for (const key in metadata) if (key !== 'user_id') return `metadata.${key}: Extra inputs are not permitted`;
  return undefined;
}

function checkSystem(system: unknown): string | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system)) return 'system: Input should be a valid list';
  const index = system.findIndex((block) => !isRecord(block) || block.type !== 'text' || typeof block.text !== 'string');
  return index >= 0 ? `system.${index}: Input should be a valid dictionary or object to extract fields from` : undefined;
}

function checkThinking(body: JsonRecord, maxTokens: number | undefined): string | undefined {
  const thinking = body.thinking;
  if (thinking === undefined) return undefined;
  if (!isRecord(thinking) || !['enabled', 'disabled', 'adaptive'].includes(String(thinking.type))) {
    return "thinking: Input tag does not match any of the expected tags: 'enabled', 'disabled', 'adaptive'";
  }
  if (thinking.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number' || !Number.isInteger(budget)) return 'thinking.enabled.budget_tokens: Field required';
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (maxTokens !== undefined && maxTokens <= budget) return '`max_tokens` must be greater than `thinking.budget_tokens`.';
  return undefined;
}

/** Whether a block carries a cache breakpoint. */
export function hasCacheControl(block: unknown): boolean {
  return isRecord(block) && isRecord(block.cache_control);
}

function checkBreakpoints(body: JsonRecord): string | undefined {
  let count = isRecord(body.cache_control) ? 1 : 0;
  const lists: unknown[] = [body.tools, body.system];
  for (const message of body.messages as JsonRecord[]) lists.push(message.content);
  for (const list of lists) {
    if (Array.isArray(list)) for (const block of list) if (hasCacheControl(block)) count += 1;
  }
  return count > MAX_CACHE_BREAKPOINTS ? `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.` : undefined;
}
