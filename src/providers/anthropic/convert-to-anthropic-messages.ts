import type { ChatRequest, JsonObject } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { parseOrThrow } from '../../dialects/validation.ts';
import {
  openAiChatInputSchema,
  type OpenAiChatInput,
  type OpenAiChatMessage,
  type OpenAiFunctionTool,
  type OpenAiToolCall,
  type OpenAiToolChoice,
  type OpenAiUserPart,
} from './openai-chat-input-schema.ts';

/** Anthropic's default is none: `max_tokens` is required. This one is used when the client sets no limit. */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

export interface AnthropicTextBlock {
  type: 'text';
  text: string;
}
export type AnthropicImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
export type AnthropicContentBlockParam =
  | AnthropicTextBlock
  | { type: 'image'; source: AnthropicImageSource }
  | { type: 'document'; source: { type: 'base64'; media_type: 'application/pdf'; data: string }; title?: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: JsonObject }
  | { type: 'tool_result'; tool_use_id: string; content: string | AnthropicTextBlock[] };

export interface AnthropicMessageParam {
  role: 'user' | 'assistant';
  content: AnthropicContentBlockParam[];
}

export interface AnthropicTool {
  name: string;
  description?: string;
  input_schema: JsonObject;
  strict?: boolean;
}

export type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** The body of `POST /v1/messages` as this adapter builds it (PROTOCOLS §1.2). */
export interface AnthropicMessagesRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: AnthropicTextBlock[];
  stream?: boolean;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  output_config?: { format: { type: 'json_schema'; schema: JsonObject } };
  thinking?: { type: 'enabled'; budget_tokens: number };
}

/** Thinking budgets for the Responses API's `reasoning.effort` (Anthropic's minimum budget is 1,024 tokens). */
const THINKING_BUDGETS: Readonly<Record<string, number>> = { low: 1024, medium: 4096, high: 16_384, xhigh: 32_000 };
const MIN_THINKING_BUDGET = 1024;

const IMAGE_MEDIA_TYPES: ReadonlySet<string> = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/**
 * An OpenAI chat request as an Anthropic Messages request. System and developer messages become `system`; tool
 * results become user turns; same-role neighbours are merged, as Anthropic wants user and assistant turns to alternate.
 * Settings Anthropic has no equivalent for (n, penalties, logprobs, seed, json_object mode, reasoning_effort, …) are
 * dropped; content it cannot take (audio, file ids, legacy function messages, non-function tools) is refused with a 400.
 */
export function convertToAnthropicMessages(request: ChatRequest): AnthropicMessagesRequest {
  const input = parseOrThrow(openAiChatInputSchema, request);
  const { system, messages } = convertMessages(input.messages);
  const body: AnthropicMessagesRequest = {
    model: input.model,
    max_tokens: input.max_completion_tokens ?? input.max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS,
    messages,
  };
  const thinking = thinkingBudget(input);
  if (system.length > 0) body.system = system;
  if (input.stream === true) body.stream = true;
  const stop = typeof input.stop === 'string' ? [input.stop] : input.stop;
  if (stop && stop.length > 0) body.stop_sequences = stop;
  // Anthropic refuses sampling settings with thinking on; thinking wins, as the client asked for it by name.
  if (input.temperature != null && thinking === undefined) body.temperature = input.temperature;
  if (input.top_p != null && thinking === undefined) body.top_p = input.top_p;
  if (thinking !== undefined) {
    body.thinking = { type: 'enabled', budget_tokens: thinking };
    // max_tokens covers thinking and the answer; with no limit given, the answer keeps the default room.
    if (input.max_completion_tokens == null && input.max_tokens == null) body.max_tokens = DEFAULT_ANTHROPIC_MAX_TOKENS + thinking;
  }
  // `safety_identifier` is OpenAI's successor to `user`; both are the opaque end-user id Anthropic's metadata takes.
  const userId = input.user ?? input.safety_identifier;
  if (userId) body.metadata = { user_id: userId };
  addTools(body, input);
  const format = input.response_format;
  if (format?.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: format.json_schema.schema ?? { type: 'object' } } };
  }
  return body;
}

/**
 * The thinking budget for `reasoning.effort` (set by the Responses translation only), or undefined for none: effort
 * unknown, a tool use forced (Anthropic allows thinking only with auto or none), or an output limit too small to think in.
 */
function thinkingBudget(input: OpenAiChatInput): number | undefined {
  const effort = input.reasoning?.effort;
  const wanted = effort === undefined ? undefined : THINKING_BUDGETS[effort];
  if (wanted === undefined) return undefined;
  const choice = input.tool_choice;
  if (choice === 'required' || (typeof choice === 'object' && choice !== null && choice.type === 'function')) return undefined;
  const limit = input.max_completion_tokens ?? input.max_tokens;
  const budget = limit == null ? wanted : Math.min(wanted, limit - 1);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

function convertMessages(input: readonly OpenAiChatMessage[]): { system: AnthropicTextBlock[]; messages: AnthropicMessageParam[] } {
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicMessageParam[] = [];
  input.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        // Anthropic has one system prompt, before the conversation; instructions given mid-conversation join it in order.
        system.push(...textBlocks(message.content, `${param}.content`));
        return;
      case 'user':
        return append(messages, 'user', userBlocks(message.content, `${param}.content`));
      case 'assistant':
        return append(messages, 'assistant', assistantBlocks(message, param));
      case 'tool':
        return append(messages, 'user', [{ type: 'tool_result', tool_use_id: message.tool_call_id, content: toolResultContent(message.content, `${param}.content`) }]);
      case 'function':
        throw invalidParam(`${param}.role`, "'function' messages are not supported for this model; use tools and 'tool' messages");
    }
  });
  return { system, messages };
}

/** Adds a turn, merging it into the previous one of the same role (consecutive tool results become one user turn). */
function append(messages: AnthropicMessageParam[], role: 'user' | 'assistant', content: AnthropicContentBlockParam[]): void {
  // Anthropic refuses empty turns; an empty OpenAI message carries nothing to send.
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last?.role === role) last.content.push(...content);
  else messages.push({ role, content });
}

type TextContent = Extract<OpenAiChatMessage, { role: 'tool' }>['content'];

function textBlocks(content: TextContent, param: string): AnthropicTextBlock[] {
  if (typeof content === 'string') return nonEmptyText(content);
  return content.flatMap((part, index) => {
    if (part.type === 'other') throw unsupportedPart(`${param}[${index}]`, part.vendorType);
    return nonEmptyText(part.text);
  });
}

// Anthropic rejects empty text blocks, which OpenAI clients send freely (an assistant turn with only tool calls).
const nonEmptyText = (text: string): AnthropicTextBlock[] => (text === '' ? [] : [{ type: 'text', text }]);

function toolResultContent(content: TextContent, param: string): string | AnthropicTextBlock[] {
  return typeof content === 'string' ? content : textBlocks(content, param);
}

function userBlocks(content: string | OpenAiUserPart[], param: string): AnthropicContentBlockParam[] {
  if (typeof content === 'string') return nonEmptyText(content);
  return content.flatMap((part, index): AnthropicContentBlockParam[] => {
    const where = `${param}[${index}]`;
    switch (part.type) {
      case 'text':
        return nonEmptyText(part.text);
      case 'image_url':
        return [{ type: 'image', source: imageSource(part.image_url.url, `${where}.image_url.url`) }];
      case 'file':
        return [pdfDocument(part.file, `${where}.file`)];
      case 'other':
        throw unsupportedPart(where, part.vendorType);
    }
  });
}

function imageSource(url: string, param: string): AnthropicImageSource {
  if (/^https?:\/\//i.test(url)) return { type: 'url', url };
  const data = parseDataUrl(url);
  if (!data) throw invalidParam(param, 'must be an http(s) URL or a base64 data: URL');
  if (!IMAGE_MEDIA_TYPES.has(data.mediaType)) throw invalidParam(param, `image type '${data.mediaType}' is not supported; use JPEG, PNG, GIF or WebP`);
  return { type: 'base64', media_type: data.mediaType, data: data.data };
}

function pdfDocument(file: { file_data?: string | undefined; filename?: string | undefined }, param: string): AnthropicContentBlockParam {
  const data = file.file_data === undefined ? undefined : parseDataUrl(file.file_data);
  // Uploaded file ids live in OpenAI's storage; Anthropic cannot fetch them.
  if (!data || data.mediaType !== 'application/pdf') throw invalidParam(`${param}.file_data`, 'only PDF files given as a base64 data: URL are supported for this model');
  return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: data.data }, ...(file.filename ? { title: file.filename } : {}) };
}

function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+)((?:;[^;,]*)*);base64,(.*)$/is.exec(url);
  if (!match) return undefined;
  return { mediaType: (match[1] ?? '').toLowerCase(), data: match[3] ?? '' };
}

function assistantBlocks(message: Extract<OpenAiChatMessage, { role: 'assistant' }>, param: string): AnthropicContentBlockParam[] {
  // Thinking comes first in an assistant turn, as the vendor produced it.
  const blocks: AnthropicContentBlockParam[] = (message.thinking_blocks ?? []).map((block) => ({ type: 'thinking', thinking: block.thinking, signature: block.signature }));
  const content = message.content;
  if (typeof content === 'string') blocks.push(...nonEmptyText(content));
  else if (content) {
    content.forEach((part, index) => {
      if (part.type === 'other') throw unsupportedPart(`${param}.content[${index}]`, part.vendorType);
      blocks.push(...nonEmptyText(part.type === 'text' ? part.text : part.refusal));
    });
  }
  (message.tool_calls ?? []).forEach((call, index) => blocks.push(toolUse(call, `${param}.tool_calls[${index}]`)));
  return blocks;
}

function toolUse(call: OpenAiToolCall, param: string): AnthropicContentBlockParam {
  let input: unknown;
  try {
    input = call.function.arguments.trim() === '' ? {} : JSON.parse(call.function.arguments);
  } catch {
    input = undefined;
  }
  // Anthropic stores a tool call's input as an object; OpenAI keeps the model's text, which may not be one.
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalidParam(`${param}.function.arguments`, 'must be a JSON object');
  return { type: 'tool_use', id: call.id, name: call.function.name, input: input as JsonObject };
}

const unsupportedPart = (param: string, type: string): GatewayError => invalidParam(param, `content parts of type '${type}' are not supported for this model`);

function addTools(body: AnthropicMessagesRequest, input: OpenAiChatInput): void {
  const tools = (input.tools ?? []).map((tool, index): AnthropicTool => {
    if (tool.type === 'other') {
      throw new GatewayError('unsupported_tool', `tools[${index}]: tools of type '${tool.vendorType}' are not supported for this model`, { param: `tools[${index}]` });
    }
    return anthropicTool(tool);
  });
  // Anthropic refuses a tool_choice without tools; OpenAI clients send `tool_choice: "none"` alone.
  if (tools.length === 0) return;
  body.tools = tools;
  const choice = anthropicToolChoice(input.tool_choice ?? undefined, input.parallel_tool_calls === false);
  if (choice) body.tool_choice = choice;
}

function anthropicTool(tool: OpenAiFunctionTool): AnthropicTool {
  const { name, description, parameters, strict } = tool.function;
  const converted: AnthropicTool = { name, input_schema: parameters ?? { type: 'object', properties: {} } };
  if (description) converted.description = description;
  if (strict === true) converted.strict = true;
  return converted;
}

/** auto/none/required/{function} → auto/none/any/tool; `parallel_tool_calls: false` rides on the choice. */
export function anthropicToolChoice(choice: OpenAiToolChoice | undefined, disableParallel: boolean): AnthropicToolChoice | undefined {
  if (choice === 'none') return { type: 'none' };
  const parallel = disableParallel ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return disableParallel ? { type: 'auto', ...parallel } : undefined;
  if (choice === 'auto') return { type: 'auto', ...parallel };
  if (choice === 'required') return { type: 'any', ...parallel };
  if (choice.type === 'function') return { type: 'tool', name: choice.function.name, ...parallel };
  throw invalidParam('tool_choice', `type '${choice.vendorType}' is not supported for this model`);
}
