import { z } from 'zod';
import type { ChatRequest } from '../../core/chat-types.ts';
import { bytesIfSameKeys, type ClientBody } from '../../lib/json-depth.ts';

const json = z.unknown();
const role = z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

const message = z.looseObject({
  role,
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() })), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(z.looseObject({})).optional(),
  tool_call_id: z.string().optional(),
});

const tool = z.looseObject({
  type: z.string(),
  function: z.looseObject({ name: z.string().min(1).max(64) }).optional(),
});

/**
 * The chat-completions request: only the fields OpenAI's API knows are kept (the whitelist of SPEC 4.2's last rule);
 * any other field is dropped before forwarding. `useWalletBalance` is the gateway's own and is read, then removed.
 */
export const chatRequestSchema = z.object({
  model: z.string().min(1, 'must not be empty'),
  messages: z.array(message).min(1, 'must contain at least one message'),
  max_completion_tokens: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  n: z.number().int().min(1).max(128).optional(),
  stop: z.union([z.string(), z.array(z.string()).max(4)]).nullable().optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  logit_bias: z.record(z.string(), z.number()).nullable().optional(),
  logprobs: z.boolean().nullable().optional(),
  top_logprobs: z.number().int().min(0).max(20).nullable().optional(),
  seed: z.number().int().nullable().optional(),
  user: z.string().optional(),
  safety_identifier: z.string().optional(),
  response_format: z.looseObject({ type: z.enum(['text', 'json_object', 'json_schema']) }).optional(),
  tools: z.array(tool).optional(),
  tool_choice: z.union([z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })]).optional(),
  parallel_tool_calls: z.boolean().optional(),
  functions: z.array(json).optional(),
  function_call: json.optional(),
  reasoning_effort: z.string().nullable().optional(),
  verbosity: z.string().nullable().optional(),
  service_tier: z.string().nullable().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
  store: z.boolean().nullable().optional(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  prompt_cache_key: z.string().optional(),
  prompt_cache_retention: z.string().nullable().optional(),
  modalities: z.array(z.string()).nullable().optional(),
  audio: json.optional(),
  prediction: json.optional(),
  web_search_options: json.optional(),
  useWalletBalance: z.boolean().optional(),
});

export type ParsedChatRequest = z.output<typeof chatRequestSchema>;

/** Splits the parsed body into the vendor request (without our own fields and nulls) and the gateway's options. */
export function toChatRequest(parsed: ParsedChatRequest): { request: ChatRequest; useWalletBalance: boolean } {
  // One pass over the fields, no rest copy or entry pairs: it runs on every chat call.
  const fields = parsed as Record<string, unknown>;
  const request: Record<string, unknown> = {};
  for (const key in fields) {
    const value = fields[key];
    if (key !== 'useWalletBalance' && value !== undefined && value !== null) request[key] = value;
  }
  return { request: request as ChatRequest, useWalletBalance: parsed.useWalletBalance === true };
}

/**
 * The client's own bytes, to send to an OpenAI-format vendor instead of serialising `request` again, when they say exactly
 * what `request` says (`bytesIfSameKeys`): `request` keeps the body's fields by value or drops them (unknown, null, the
 * gateway's own — SPEC's whitelist), so the same count of keys in the text means none was dropped and none written twice.
 * The values are zod's output, which for this schema is its input: it checks and never transforms (chat-request.test.ts
 * holds it to that). The caller also checks that the vendor knows the model by the id the body names.
 */
export function passThroughBody(body: ClientBody | undefined, request: ChatRequest): Buffer | undefined {
  return bytesIfSameKeys(body, request);
}
