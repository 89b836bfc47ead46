import { z } from 'zod';

/**
 * The parts of an OpenAI chat request (PROTOCOLS §2.1) the Anthropic adapter converts. The route's schema is loose about
 * message contents and tools; the adapter needs their exact shapes, so it narrows them here. Unknown fields are
 * stripped (nothing is forwarded unconverted); unknown part and tool types parse as `other` and are refused by the
 * converter with a message naming them.
 */

const other = z.object({ type: z.string() }).transform(({ type }) => ({ type: 'other' as const, vendorType: type }));

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });
const imagePart = z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string() }) });
const filePart = z.object({
  type: z.literal('file'),
  file: z.object({ file_data: z.string().optional(), file_id: z.string().optional(), filename: z.string().optional() }),
});

export const userPartSchema = z.union([textPart, imagePart, filePart, other]);
export type OpenAiUserPart = z.output<typeof userPartSchema>;

const textContent = z.union([z.string(), z.array(z.union([textPart, other]))]);

const toolCall = z.object({
  id: z.string(),
  function: z.object({ name: z.string(), arguments: z.string() }),
});
export type OpenAiToolCall = z.output<typeof toolCall>;

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: textContent }),
  z.object({ role: z.literal('user'), content: z.union([z.string(), z.array(userPartSchema)]) }),
  z.object({
    role: z.literal('assistant'),
    content: z.union([z.string(), z.array(z.union([textPart, refusalPart, other]))]).nullish(),
    tool_calls: z.array(toolCall).nullish(),
    thinking_blocks: z.array(z.object({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() })).nullish(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: textContent }),
  z.object({ role: z.literal('function') }),
]);
export type OpenAiChatMessage = z.output<typeof messageSchema>;

const functionTool = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string(),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
    strict: z.boolean().nullish(),
  }),
});
export type OpenAiFunctionTool = z.output<typeof functionTool>;

export const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) }),
  other,
]);
export type OpenAiToolChoice = z.output<typeof toolChoiceSchema>;

const responseFormat = z.union([
  z.object({ type: z.literal('json_schema'), json_schema: z.object({ schema: z.record(z.string(), z.unknown()).optional() }) }),
  other,
]);

export const openAiChatInputSchema = z.object({
  model: z.string(),
  messages: z.array(messageSchema),
  max_completion_tokens: z.number().int().nullish(),
  max_tokens: z.number().int().nullish(),
  temperature: z.number().nullish(),
  top_p: z.number().nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  tools: z.array(z.union([functionTool, other])).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormat.nullish(),
  stream: z.boolean().nullish(),
  /** Set only by the Responses translation (chat-types.ts ThinkingBlock): asks for Claude's extended thinking. */
  reasoning: z.object({ effort: z.string() }).nullish(),
});
export type OpenAiChatInput = z.output<typeof openAiChatInputSchema>;
