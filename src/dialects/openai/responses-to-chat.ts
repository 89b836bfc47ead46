import { z } from 'zod';
import type { ChatMessage, ChatRequest, JsonObject, ThinkingBlock } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { paramPath, parseOrThrow } from '../validation.ts';
import type { ResponsesRequest } from './responses-request.ts';

/**
 * A Responses request as a canonical chat request, for models the gateway translates (Claude). Everything the
 * translation cannot carry is refused with a 400 naming the param (`input[2].content[0]`, `tools[1]`), never dropped
 * silently; settings with no counterpart (truncation, include, metadata, store) are the gateway's own or have no effect.
 */

const other = z.object({ type: z.string() }).transform(({ type }) => ({ type: 'other' as const, vendorType: type }));

const inputText = z.object({ type: z.literal('input_text'), text: z.string() });
const outputText = z.object({ type: z.literal('output_text'), text: z.string() });
const refusal = z.object({ type: z.literal('refusal'), refusal: z.string() });
const inputImage = z.object({ type: z.literal('input_image'), image_url: z.string().nullish(), file_id: z.string().nullish() });
const inputFile = z.object({ type: z.literal('input_file'), file_data: z.string().nullish(), file_id: z.string().nullish(), file_url: z.string().nullish(), filename: z.string().nullish() });
const contentPart = z.union([inputText, outputText, refusal, inputImage, inputFile, other]);
type ContentPart = z.output<typeof contentPart>;

const messageItem = z.object({
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPart)]),
});
const functionCallItem = z.object({ call_id: z.string().min(1), name: z.string().min(1), arguments: z.string() });
const functionCallOutputItem = z.object({ call_id: z.string().min(1), output: z.union([z.string(), z.array(contentPart)]) });
const reasoningItem = z.object({
  summary: z.array(z.object({ text: z.string() })).nullish(),
  content: z.array(z.object({ text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

const functionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(64),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const IMAGE_DATA_URL = /^data:image\/(jpeg|png|gif|webp);base64,/i;

/** The input items of one request, normalised: a string input is one user message. */
export function inputItems(input: ResponsesRequest['input']): JsonObject[] {
  if (input === undefined) return [];
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: input }];
  return input;
}

/**
 * The canonical request. `history` is the stored conversation `previous_response_id` leads to (items of earlier turns,
 * oldest first); `items` this request's own input items.
 */
export function responsesToChat(request: ResponsesRequest, history: readonly JsonObject[], items: readonly JsonObject[], upstreamModel: string): ChatRequest {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  // Earlier turns were checked when they were made; their items are read with the same rules.
  history.forEach((item, index) => convertItem(item, ['previous_response_id', index], messages));
  items.forEach((item, index) => convertItem(item, ['input', index], messages));
  if (messages.every((message) => message.role === 'system')) throw invalidParam('input', 'must contain at least one message');
  const chat: ChatRequest = { model: upstreamModel, messages };
  if (request.stream === true) chat.stream = true;
  if (request.max_output_tokens != null) chat.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  const user = request.safety_identifier ?? request.user;
  if (user) chat.user = user;
  addTools(chat, request);
  const format = request.text?.format;
  if (format?.type === 'json_schema') {
    if (typeof format.schema !== 'object' || format.schema === null) throw invalidParam('text.format.schema', 'is required');
    chat.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'response', schema: format.schema, strict: format.strict === true } };
  } else if (format && format.type !== 'text' && format.type !== 'json_object') {
    throw invalidParam('text.format.type', `'${format.type}' is not supported for this model`);
  }
  const effort = request.reasoning?.effort;
  if (effort && effort !== 'none' && effort !== 'minimal') chat.reasoning = { effort };
  return chat;
}

function itemType(item: JsonObject): string | undefined {
  if (typeof item.type === 'string') return item.type;
  return 'role' in item ? 'message' : undefined;
}

function convertItem(item: JsonObject, at: Array<string | number>, messages: ChatMessage[]): void {
  const param = paramPath(at);
  switch (itemType(item)) {
    case 'message': {
      const message = parseOrThrow(messageItem, item, at);
      messages.push(convertMessage(message, at));
      return;
    }
    case 'function_call': {
      const call = parseOrThrow(functionCallItem, item, at);
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name: call.name, arguments: call.arguments } }] });
      return;
    }
    case 'function_call_output': {
      const output = parseOrThrow(functionCallOutputItem, item, at);
      const content = typeof output.output === 'string' ? output.output : textOf(output.output, [...at, 'output']);
      messages.push({ role: 'tool', tool_call_id: output.call_id, content });
      return;
    }
    case 'reasoning': {
      const reasoning = parseOrThrow(reasoningItem, item, at);
      // Claude needs its signature to see its thinking again; reasoning without one (another vendor's) is left out.
      if (!reasoning.encrypted_content) return;
      const thinking = (reasoning.content ?? reasoning.summary ?? []).map((part) => part.text).join('');
      const block: ThinkingBlock = { type: 'thinking', thinking, signature: reasoning.encrypted_content };
      messages.push({ role: 'assistant', content: null, thinking_blocks: [block] });
      return;
    }
    case undefined:
      throw invalidParam(`${param}.type`, 'is required');
    default:
      throw invalidParam(`${param}.type`, `input items of type '${String(item.type)}' are not supported for this model`);
  }
}

function convertMessage(message: z.output<typeof messageItem>, at: Array<string | number>): ChatMessage {
  const contentAt = [...at, 'content'];
  if (message.role === 'system' || message.role === 'developer') {
    return { role: 'system', content: typeof message.content === 'string' ? message.content : textOf(message.content, contentAt) };
  }
  if (message.role === 'assistant') {
    return { role: 'assistant', content: typeof message.content === 'string' ? message.content : textOf(message.content, contentAt) };
  }
  if (typeof message.content === 'string') return { role: 'user', content: message.content };
  return { role: 'user', content: message.content.map((part, index) => userPart(part, [...contentAt, index])) };
}

function userPart(part: ContentPart, at: Array<string | number>): JsonObject {
  const param = paramPath(at);
  switch (part.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: part.text };
    case 'refusal':
      return { type: 'text', text: part.refusal };
    case 'input_image': {
      const url = part.image_url;
      if (!url) throw invalidParam(`${param}.image_url`, 'is required for this model (uploaded file ids are not supported)');
      if (!/^https?:\/\//i.test(url) && !IMAGE_DATA_URL.test(url)) {
        throw invalidParam(`${param}.image_url`, 'must be an http(s) URL or a base64 data: URL of a JPEG, PNG, GIF or WebP image');
      }
      return { type: 'image_url', image_url: { url } };
    }
    case 'input_file':
      if (!part.file_data || !/^data:application\/pdf;base64,/i.test(part.file_data)) {
        throw invalidParam(`${param}.file_data`, 'only PDF files given as a base64 data: URL are supported for this model');
      }
      return { type: 'file', file: { file_data: part.file_data, ...(part.filename ? { filename: part.filename } : {}) } };
    case 'other':
      throw invalidParam(`${param}.type`, `content parts of type '${part.vendorType}' are not supported for this model`);
  }
}

/** Text-only content (instructions, assistant turns, tool output) as one string. */
function textOf(parts: readonly ContentPart[], at: Array<string | number>): string {
  return parts
    .map((part, index) => {
      if (part.type === 'input_text' || part.type === 'output_text') return part.text;
      if (part.type === 'refusal') return part.refusal;
      const type = part.type === 'other' ? part.vendorType : part.type;
      throw invalidParam(`${paramPath([...at, index])}.type`, `content parts of type '${type}' are not supported here for this model`);
    })
    .join('');
}

function addTools(chat: ChatRequest, request: ResponsesRequest): void {
  const tools = (request.tools ?? []).map((tool, index) => {
    if (tool.type !== 'function') {
      throw new GatewayError('unsupported_tool', `tools[${index}]: tools of type '${tool.type}' are not supported for this model`, { param: `tools[${index}]` });
    }
    const fn = parseOrThrow(functionTool, tool, ['tools', index]);
    const definition: JsonObject = { name: fn.name, parameters: fn.parameters ?? { type: 'object', properties: {} } };
    if (fn.description) definition.description = fn.description;
    if (fn.strict === true) definition.strict = true;
    return { type: 'function', function: definition };
  });
  if (tools.length > 0) chat.tools = tools;
  const choice = request.tool_choice;
  if (choice == null) return;
  if (typeof choice === 'string') chat.tool_choice = choice;
  else if (choice.type === 'function' && typeof choice.name === 'string') chat.tool_choice = { type: 'function', function: { name: choice.name } };
  else throw invalidParam('tool_choice', `type '${choice.type}' is not supported for this model`);
}
