// Validation of a Responses API body (POST /v1/responses) and its translation to the chat-completions
// request the simulator already knows how to answer, so both endpoints follow the same reply rules.
//
// Input → chat messages: `instructions` → a leading `developer` message; a string `input` → one user
// message; items: messages (role user|system|developer|assistant; content a string or parts:
// input_text / output_text / refusal → text, input_image → image_url (85 tokens), other parts count as
// their JSON) → chat messages; `function_call` → an assistant message with that tool call;
// `function_call_output` → a `tool` message; `reasoning` and other item types are skipped.
// Tools: `{type:"function", name, parameters}` entries (other tool types are accepted and ignored).
// tool_choice "none" | "auto" | "required" | {type:"function", name}. text.format json_schema / json_object
// → the chat response_format. max_output_tokens must be ≥ 16 (as the vendor checks).

import { isRecord, recordField, type JsonRecord } from './json-narrow.ts';
import type { ChatRequest } from './openai-chat-request.ts';
import { openAiError, type OpenAiErrorObject } from './vendor-errors.ts';

export const MIN_MAX_OUTPUT_TOKENS = 16;

export interface ResponsesRequest {
  model: string;
  /** The `input` as sent: a string, or the list of items. */
  input: string | JsonRecord[];
  instructions: string | null;
  stream: boolean;
  store: boolean;
  previousResponseId: string | null;
  maxOutputTokens: number | null;
  /** The `tools` list as sent (echoed back in the response). */
  tools: JsonRecord[];
  /** tool_choice echoed back: "auto" when absent. */
  toolChoice: unknown;
  /** text config echoed back: format (default {type:"text"}), and verbosity when given. */
  text: JsonRecord;
  reasoning: { effort: unknown; summary: unknown };
  metadata: JsonRecord;
  parallelToolCalls: boolean;
  temperature: number;
  topP: number;
  truncation: string;
  user: string | null;
}

type Invalid = { error: OpenAiErrorObject };

function invalid(message: string, param: string | null, code: string | null = null): Invalid {
  return openAiError(message, 'invalid_request_error', param, code);
}

const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);

export function parseResponsesRequest(body: unknown): ResponsesRequest | Invalid {
  if (!isRecord(body)) return invalid('Invalid body: expected a JSON object.', null);
  if (body.model === undefined) return invalid("Missing required parameter: 'model'.", 'model', 'missing_required_parameter');
  if (typeof body.model !== 'string' || body.model === '') {
    return invalid("Invalid type for 'model': expected a string, but got something else instead.", 'model', 'invalid_type');
  }
  const previousResponseId = typeof body.previous_response_id === 'string' ? body.previous_response_id : null;
  const input = body.input;
  if (input === undefined && previousResponseId === null) return invalid("Missing required parameter: 'input'.", 'input', 'missing_required_parameter');
  if (input !== undefined && typeof input !== 'string' && !Array.isArray(input)) {
    return invalid("Invalid type for 'input': expected one of a string or array of input items, but got something else instead.", 'input', 'invalid_type');
  }
  const items = Array.isArray(input) ? checkItems(input) : input ?? [];
  if (!Array.isArray(items) && typeof items !== 'string') return items;
  const instructions = body.instructions;
  if (instructions !== undefined && instructions !== null && typeof instructions !== 'string') {
    return invalid("Invalid type for 'instructions': expected a string, but got something else instead.", 'instructions', 'invalid_type');
  }
  const maxOutputTokens = body.max_output_tokens;
  if (maxOutputTokens !== undefined && maxOutputTokens !== null) {
    if (typeof maxOutputTokens !== 'number' || !Number.isInteger(maxOutputTokens)) {
      return invalid("Invalid type for 'max_output_tokens': expected an integer, but got something else instead.", 'max_output_tokens', 'invalid_type');
    }
    if (maxOutputTokens < MIN_MAX_OUTPUT_TOKENS) {
      return invalid(
        `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= ${MIN_MAX_OUTPUT_TOKENS}, but got ${maxOutputTokens} instead.`,
        'max_output_tokens',
        'integer_below_min_value',
      );
    }
  }
  const tools = body.tools ?? [];
  if (!Array.isArray(tools)) return invalid("Invalid type for 'tools': expected an array, but got something else instead.", 'tools', 'invalid_type');
  for (const [index, tool] of tools.entries()) {
    if (!isRecord(tool) || typeof tool.type !== 'string') {
      return invalid(`Missing required parameter: 'tools[${index}].type'.`, `tools[${index}].type`, 'missing_required_parameter');
    }
    if (tool.type === 'function' && typeof tool.name !== 'string') {
      return invalid(`Missing required parameter: 'tools[${index}].name'.`, `tools[${index}].name`, 'missing_required_parameter');
    }
  }
  const text = recordField(body, 'text') ?? {};
  const format = recordField(text, 'format');
  if (format?.type === 'json_schema' && !isRecord(format.schema)) {
    return invalid("Missing required parameter: 'text.format.schema'.", 'text.format.schema', 'missing_required_parameter');
  }
  const reasoning = recordField(body, 'reasoning');
  const metadata = recordField(body, 'metadata') ?? {};
  return {
    model: body.model,
    input: items,
    instructions: typeof instructions === 'string' ? instructions : null,
    stream: body.stream === true,
    store: body.store !== false,
    previousResponseId,
    maxOutputTokens: typeof maxOutputTokens === 'number' ? maxOutputTokens : null,
    tools: tools as JsonRecord[],
    toolChoice: body.tool_choice ?? 'auto',
    text: { format: format ?? { type: 'text' }, ...(text.verbosity === undefined ? {} : { verbosity: text.verbosity }) },
    reasoning: { effort: reasoning?.effort ?? null, summary: reasoning?.summary ?? null },
    metadata,
    parallelToolCalls: body.parallel_tool_calls !== false,
    temperature: typeof body.temperature === 'number' ? body.temperature : 1,
    topP: typeof body.top_p === 'number' ? body.top_p : 1,
    truncation: typeof body.truncation === 'string' ? body.truncation : 'disabled',
    user: typeof body.user === 'string' ? body.user : null,
  };
}

function checkItems(items: unknown[]): JsonRecord[] | Invalid {
  for (const [index, item] of items.entries()) {
    if (!isRecord(item)) return invalid(`Invalid type for 'input[${index}]': expected an object, but got something else instead.`, `input[${index}]`, 'invalid_type');
    const type = item.type ?? 'message';
    if (type === 'message') {
      if (typeof item.role !== 'string' || !MESSAGE_ROLES.has(item.role)) {
        return invalid(
          `Invalid value: '${String(item.role)}'. Supported values are: 'user', 'assistant', 'system', and 'developer'.`,
          `input[${index}].role`,
          'invalid_value',
        );
      }
      if (typeof item.content !== 'string' && !Array.isArray(item.content)) {
        return invalid(`Missing required parameter: 'input[${index}].content'.`, `input[${index}].content`, 'missing_required_parameter');
      }
    } else if (type === 'function_call') {
      for (const key of ['call_id', 'name', 'arguments']) {
        if (typeof item[key] !== 'string') return invalid(`Missing required parameter: 'input[${index}].${key}'.`, `input[${index}].${key}`, 'missing_required_parameter');
      }
    } else if (type === 'function_call_output') {
      if (typeof item.call_id !== 'string') return invalid(`Missing required parameter: 'input[${index}].call_id'.`, `input[${index}].call_id`, 'missing_required_parameter');
      if (item.output === undefined) return invalid(`Missing required parameter: 'input[${index}].output'.`, `input[${index}].output`, 'missing_required_parameter');
    }
  }
  return items as JsonRecord[];
}

/** Input items of a request: a string input becomes one user message item. */
export function inputItems(input: string | readonly JsonRecord[]): JsonRecord[] {
  return typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : [...input];
}

function chatPart(part: unknown): unknown {
  if (!isRecord(part)) return part;
  if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return { type: 'text', text: part.text };
  if (part.type === 'refusal' && typeof part.refusal === 'string') return { type: 'text', text: part.refusal };
  if (part.type === 'input_image') return { type: 'image_url', image_url: { url: part.image_url ?? part.file_id ?? '' } };
  return part;
}

function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (!Array.isArray(output)) return JSON.stringify(output);
  return output.map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('\n');
}

/** Chat messages equivalent to instructions + items (see the rule at the top of this file). */
export function itemsToChatMessages(instructions: string | null, items: readonly JsonRecord[]): JsonRecord[] {
  const messages: JsonRecord[] = [];
  if (instructions !== null && instructions !== '') messages.push({ role: 'developer', content: instructions });
  for (const item of items) {
    const type = item.type ?? 'message';
    if (type === 'message') {
      messages.push({ role: item.role, content: typeof item.content === 'string' ? item.content : (item.content as unknown[]).map(chatPart) });
    } else if (type === 'function_call') {
      messages.push({ role: 'assistant', content: null, tool_calls: [{ id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } }] });
    } else if (type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: outputText(item.output) });
    }
  }
  return messages;
}

/** The chat-completions request whose reply is this response's reply. */
export function toChatRequest(request: ResponsesRequest, messages: JsonRecord[]): ChatRequest {
  const tools = request.tools
    .filter((tool) => tool.type === 'function' && typeof tool.name === 'string')
    .map((tool) => ({ type: 'function', function: { name: tool.name, parameters: tool.parameters ?? { type: 'object' } } }));
  const choice = request.toolChoice;
  const toolChoice = isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string'
    ? { type: 'function', function: { name: choice.name } }
    : choice;
  const format = recordField(request.text, 'format');
  const responseFormat = format?.type === 'json_schema'
    ? { type: 'json_schema', json_schema: { name: format.name, schema: format.schema } }
    : format?.type === 'json_object' ? { type: 'json_object' } : undefined;
  return {
    model: request.model,
    messages,
    n: 1,
    stream: request.stream,
    includeUsage: true,
    maxTokens: request.maxOutputTokens ?? undefined,
    stops: [],
    responseFormat,
    tools,
    toolChoice,
  };
}
