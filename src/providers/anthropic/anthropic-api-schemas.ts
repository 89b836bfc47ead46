import { z } from 'zod';

/**
 * Minimal schemas of the Anthropic Messages API answers (PROTOCOLS §1.7–1.9): only the fields the chat adapter reads.
 * Objects strip unknown fields rather than reject them, and unknown block, delta and event types parse as `other`,
 * because the vendor adds new ones without notice.
 */

/** Counts of one call. `input_tokens` excludes cache reads and writes (PROTOCOLS §1.7). */
export const anthropicUsageSchema = z.object({
  input_tokens: z.number(),
  output_tokens: z.number(),
  cache_creation_input_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation: z.object({ ephemeral_5m_input_tokens: z.number().nullish(), ephemeral_1h_input_tokens: z.number().nullish() }).nullish(),
});
export type AnthropicUsage = z.output<typeof anthropicUsageSchema>;

const other = z.object({ type: z.string() }).transform(({ type }) => ({ type: 'other' as const, vendorType: type }));

const contentBlockSchema = z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  // Read only when the request asked for reasoning (the Responses path); chat answers leave it out.
  z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().optional() }),
  // redacted_thinking, server tool blocks: nothing an OpenAI-format answer can carry.
  other,
]);
export type AnthropicContentBlock = z.output<typeof contentBlockSchema>;

/** The `Message` object of a non-stream answer. */
export const anthropicMessageSchema = z.object({
  id: z.string(),
  model: z.string(),
  content: z.array(contentBlockSchema),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema,
});
export type AnthropicMessage = z.output<typeof anthropicMessageSchema>;

const deltaSchema = z.union([
  z.object({ type: z.literal('text_delta'), text: z.string() }),
  z.object({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  z.object({ type: z.literal('thinking_delta'), thinking: z.string() }),
  z.object({ type: z.literal('signature_delta'), signature: z.string() }),
  // citations_delta: dropped, as citations are.
  other,
]);

/** The known stream events; `message_delta.usage` counts are cumulative and may include the input fields. */
export const anthropicStreamEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message_start'), message: z.object({ id: z.string(), model: z.string(), usage: anthropicUsageSchema }) }),
  z.object({ type: z.literal('content_block_start'), index: z.number(), content_block: contentBlockSchema }),
  z.object({ type: z.literal('content_block_delta'), index: z.number(), delta: deltaSchema }),
  z.object({ type: z.literal('content_block_stop'), index: z.number() }),
  z.object({
    type: z.literal('message_delta'),
    delta: z.object({ stop_reason: z.string().nullish() }),
    usage: anthropicUsageSchema.partial().nullish(),
  }),
  z.object({ type: z.literal('message_stop') }),
  z.object({ type: z.literal('ping') }),
  z.object({ type: z.literal('error'), error: z.object({ type: z.string(), message: z.string() }) }),
]);
export type AnthropicStreamEvent = z.output<typeof anthropicStreamEventSchema>;

export const ANTHROPIC_STREAM_EVENT_TYPES: ReadonlySet<string> = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

/** An error body: `{"type":"error","error":{"type","message"},"request_id"}` (PROTOCOLS §1.8). */
export const anthropicErrorBodySchema = z.object({ error: z.object({ type: z.string(), message: z.string() }) });
