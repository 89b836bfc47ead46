import { z } from 'zod';
import type { ChatMessage, ChatRequest, JsonObject, ThinkingBlock } from '../../core/chat-types.ts';
import { GatewayError, invalidParam } from '../../core/errors.ts';
import { paramPath, parseOrThrow } from '../validation.ts';
import type { ResponsesRequest } from './responses-request.ts';
import { flatToolName, type ToolNames, type ToolTarget } from './responses-render.ts';

/**
 * A Responses request as a canonical chat request, for models the gateway translates (Claude). Everything the
 * translation cannot carry is refused with a 400 naming the param (`input[2].content[0]`, `tools[1]`), never dropped
 * silently; settings with no counterpart (truncation, include, metadata, store) are the gateway's own or have no effect.
 * Three exceptions, so that clients such as the Codex CLI work with their default tools: hosted tools the vendor runs
 * itself (web search, file search, code interpreter, image generation) are skipped unless `tool_choice` forces one (400),
 * and the skipped types are reported; `namespace` tools are flattened into function tools named `<namespace>__<name>`;
 * `custom` (freeform) tools become function tools with one string parameter `input`. `ToolNames` maps the flattened and
 * custom names back, so calls come back as the client sent the tools (responses-render.ts).
 */

/** The translation: the canonical request, the names to map back, and the hosted tool types left out. */
export interface TranslatedRequest {
  chat: ChatRequest;
  toolNames: ToolNames;
  skippedTools: string[];
}

/** Hosted tools OpenAI runs on its side; Claude (through the gateway) cannot, so they are skipped unless forced. */
const HOSTED_TOOL = /^(web_search(_preview)?(_\d{4}_\d{2}_\d{2})?|file_search|code_interpreter|image_generation)$/;

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
const functionCallItem = z.object({ call_id: z.string().min(1), name: z.string().min(1), namespace: z.string().min(1).nullish(), arguments: z.string() });
const customToolCallItem = z.object({ call_id: z.string().min(1), name: z.string().min(1), namespace: z.string().min(1).nullish(), input: z.string() });
const itemReference = z.object({ id: z.string().min(1) });
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
const customTool = z.object({
  type: z.literal('custom'),
  name: z.string().min(1).max(64),
  description: z.string().nullish(),
  format: z.union([z.object({ type: z.literal('text') }), z.object({ type: z.literal('grammar'), syntax: z.string(), definition: z.string() })]).nullish(),
});
const namespaceTool = z.object({
  type: z.literal('namespace'),
  name: z.string().min(1),
  description: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string() })),
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
export function responsesToChat(request: ResponsesRequest, history: readonly JsonObject[], items: readonly JsonObject[], upstreamModel: string): TranslatedRequest {
  const messages: ChatMessage[] = [];
  if (request.instructions) messages.push({ role: 'system', content: request.instructions });
  // Earlier turns were checked when they were made; their items are read with the same rules.
  history.forEach((item, index) => convertItem(item, ['previous_response_id', index], messages));
  const stored = storedItems(history);
  items.forEach((item, index) => convertItem(resolveReference(item, index, stored, request), ['input', index], messages));
  if (messages.every((message) => message.role === 'system')) throw invalidParam('input', 'must contain at least one message');
  const chat: ChatRequest = { model: upstreamModel, messages };
  if (request.stream === true) chat.stream = true;
  if (request.max_output_tokens != null) chat.max_completion_tokens = request.max_output_tokens;
  if (request.temperature != null) chat.temperature = request.temperature;
  if (request.top_p != null) chat.top_p = request.top_p;
  if (request.parallel_tool_calls != null) chat.parallel_tool_calls = request.parallel_tool_calls;
  const user = request.safety_identifier ?? request.user;
  if (user) chat.user = user;
  const { toolNames, skippedTools } = addTools(chat, request);
  const format = request.text?.format;
  if (format?.type === 'json_schema') {
    if (typeof format.schema !== 'object' || format.schema === null) throw invalidParam('text.format.schema', 'is required');
    chat.response_format = { type: 'json_schema', json_schema: { name: format.name ?? 'response', schema: format.schema, strict: format.strict === true } };
  } else if (format && format.type !== 'text' && format.type !== 'json_object') {
    throw invalidParam('text.format.type', `'${format.type}' is not supported for this model`);
  }
  const effort = request.reasoning?.effort;
  if (effort && effort !== 'none' && effort !== 'minimal') chat.reasoning = { effort };
  return { chat, toolNames, skippedTools };
}

function itemType(item: JsonObject): string | undefined {
  if (typeof item.type === 'string') return item.type;
  if ('role' in item) return 'message';
  return typeof item.id === 'string' ? 'item_reference' : undefined;
}

/** The items of the stored conversation by their ids (the last of a repeated id wins). */
function storedItems(history: readonly JsonObject[]): Map<string, JsonObject> {
  const byId = new Map<string, JsonObject>();
  for (const item of history) if (typeof item.id === 'string' && itemType(item) !== 'item_reference') byId.set(item.id, item);
  return byId;
}

/** An `item_reference` as the stored item it names; only items of the conversation `previous_response_id` leads to can be named. */
function resolveReference(item: JsonObject, index: number, stored: ReadonlyMap<string, JsonObject>, request: ResponsesRequest): JsonObject {
  if (itemType(item) !== 'item_reference') return item;
  const { id } = parseOrThrow(itemReference, item, ['input', index]);
  const found = stored.get(id);
  if (found) return found;
  const why = request.previous_response_id
    ? `names item '${id}', which is not in the stored conversation previous_response_id leads to`
    : `names item '${id}'; for this model an item_reference can only name an item of the stored conversation previous_response_id leads to`;
  throw invalidParam(`input[${index}].id`, why);
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
      const name = flatToolName(call.namespace, call.name);
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name, arguments: call.arguments } }] });
      return;
    }
    case 'custom_tool_call': {
      const call = parseOrThrow(customToolCallItem, item, at);
      const name = flatToolName(call.namespace, call.name);
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: call.call_id, type: 'function', function: { name, arguments: JSON.stringify({ input: call.input }) } }] });
      return;
    }
    case 'function_call_output':
    case 'custom_tool_call_output': {
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

function addTools(chat: ChatRequest, request: ResponsesRequest): { toolNames: ToolNames; skippedTools: string[] } {
  const toolNames = new Map<string, ToolTarget>();
  const skippedTools: string[] = [];
  const tools: JsonObject[] = [];
  const seen = new Map<string, string>();
  const add = (definition: JsonObject, param: string, target: ToolTarget | undefined): void => {
    const name = String(definition.name);
    const earlier = seen.get(name);
    if (earlier) throw invalidParam(param, `the tool name '${name}' is already used by ${earlier} (namespaced tools are named <namespace>__<name> for this model)`);
    seen.set(name, param);
    if (target) toolNames.set(name, target);
    tools.push({ type: 'function', function: definition });
  };
  (request.tools ?? []).forEach((tool, index) => {
    const at = ['tools', index];
    if (tool.type === 'function') add(functionDefinition(parseOrThrow(functionTool, tool, at), undefined, at), paramPath(at), undefined);
    else if (tool.type === 'custom') {
      const custom = parseOrThrow(customTool, tool, at);
      add(customDefinition(custom, undefined, at), paramPath(at), { name: custom.name, custom: true });
    }
    else if (tool.type === 'namespace') {
      const group = parseOrThrow(namespaceTool, tool, at);
      group.tools.forEach((inner, innerIndex) => {
        const innerAt = [...at, 'tools', innerIndex];
        if (inner.type === 'function') {
          const fn = parseOrThrow(functionTool, inner, innerAt);
          add(functionDefinition(fn, group, innerAt), paramPath(innerAt), { name: fn.name, namespace: group.name, custom: false });
        } else if (inner.type === 'custom') {
          const custom = parseOrThrow(customTool, inner, innerAt);
          add(customDefinition(custom, group, innerAt), paramPath(innerAt), { name: custom.name, namespace: group.name, custom: true });
        } else {
          throw new GatewayError('unsupported_tool', `${paramPath(innerAt)}: tools of type '${inner.type}' are not supported in a namespace`, { param: paramPath(innerAt) });
        }
      });
    } else if (HOSTED_TOOL.test(tool.type)) {
      // Run by OpenAI on its side: Claude cannot run it here, so it is left out rather than faked (unless forced, below).
      if (!skippedTools.includes(tool.type)) skippedTools.push(tool.type);
    } else {
      throw new GatewayError('unsupported_tool', `tools[${index}]: tools of type '${tool.type}' are not supported for this model`, { param: `tools[${index}]` });
    }
  });
  if (tools.length > 0) chat.tools = tools;
  const choice = request.tool_choice;
  if (choice == null) return { toolNames, skippedTools };
  if (typeof choice === 'string') {
    if (choice === 'required' && tools.length === 0) throw invalidParam('tool_choice', "is 'required' but no tool this model can call was given");
    if (tools.length > 0) chat.tool_choice = choice;
  } else if ((choice.type === 'function' || choice.type === 'custom') && typeof choice.name === 'string') {
    const namespace = typeof choice.namespace === 'string' ? choice.namespace : undefined;
    chat.tool_choice = { type: 'function', function: { name: flatToolName(namespace, choice.name) } };
  } else if (HOSTED_TOOL.test(choice.type)) {
    throw invalidParam('tool_choice', `forces the hosted tool '${choice.type}', which this model cannot run`);
  } else {
    throw invalidParam('tool_choice', `type '${choice.type}' is not supported for this model`);
  }
  return { toolNames, skippedTools };
}

const MAX_TOOL_NAME = 64;

function toolName(name: string, group: { name: string } | undefined, at: Array<string | number>): string {
  const flat = flatToolName(group?.name, name);
  if (flat.length > MAX_TOOL_NAME) throw invalidParam(`${paramPath(at)}.name`, `'${flat}' (namespace and name) is longer than ${MAX_TOOL_NAME} characters`);
  return flat;
}

function describe(description: string | null | undefined, group: { name: string; description?: string | null | undefined } | undefined): string | undefined {
  if (!group) return description ?? undefined;
  const context = group.description ? `${group.name}: ${group.description}` : group.name;
  return description ? `${description}\n\n(Part of ${context})` : `Part of ${context}`;
}

function functionDefinition(fn: z.output<typeof functionTool>, group: z.output<typeof namespaceTool> | undefined, at: Array<string | number>): JsonObject {
  const definition: JsonObject = { name: toolName(fn.name, group, at), parameters: fn.parameters ?? { type: 'object', properties: {} } };
  const description = describe(fn.description, group);
  if (description) definition.description = description;
  if (fn.strict === true) definition.strict = true;
  return definition;
}

/** A freeform tool as a function taking its text as `input`; a grammar is given to the model in the description. */
function customDefinition(custom: z.output<typeof customTool>, group: z.output<typeof namespaceTool> | undefined, at: Array<string | number>): JsonObject {
  let description = describe(custom.description, group) ?? '';
  if (custom.format?.type === 'grammar') {
    description += `${description ? '\n\n' : ''}The input must follow this ${custom.format.syntax} grammar:\n${custom.format.definition}`;
  }
  const input: JsonObject = { type: 'string', description: 'The raw text input of the tool.' };
  const definition: JsonObject = {
    name: toolName(custom.name, group, at),
    parameters: { type: 'object', properties: { input }, required: ['input'], additionalProperties: false },
  };
  if (description) definition.description = description;
  return definition;
}
