// Validation of a chat-completions body, roughly as strict as OpenAI (same messages, params and codes).

import { isRecord, numberField, recordField, stringList, type JsonRecord } from './json-narrow.ts';
import { openAiError, type OpenAiErrorObject } from './vendor-errors.ts';

export interface ChatRequest {
  model: string;
  messages: JsonRecord[];
  n: number;
  stream: boolean;
  includeUsage: boolean;
  /** `max_completion_tokens`, else legacy `max_tokens`; undefined = no cap. */
  maxTokens: number | undefined;
  stops: string[];
  responseFormat: JsonRecord | undefined;
  /** Function tools (entries of `tools` with a `function` object). */
  tools: JsonRecord[];
  toolChoice: unknown;
}

type Invalid = { error: OpenAiErrorObject };

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

function invalid(message: string, param: string | null, code: string | null = null): Invalid {
  return openAiError(message, 'invalid_request_error', param, code);
}

export function parseChatRequest(body: unknown): ChatRequest | Invalid {
  if (!isRecord(body)) return invalid('Invalid body: expected a JSON object.', null);
  if (typeof body.model !== 'string' || body.model === '') return invalid('you must provide a model parameter', null);
  const messages = body.messages;
  if (messages === undefined) return invalid("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages)) return invalid("Invalid type for 'messages': expected an array, but got something else instead.", 'messages', 'invalid_type');
  if (messages.length === 0) {
    return invalid("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", 'messages', 'empty_array');
  }
  const checked = checkMessages(messages);
  if (!Array.isArray(checked)) return checked;
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 128) {
    return invalid(`Invalid 'n': integer below minimum value. Expected a value >= 1 and <= 128, but got ${JSON.stringify(n)} instead.`, 'n', 'integer_below_min_value');
  }
  const stream = body.stream === true;
  const streamOptions = recordField(body, 'stream_options');
  if (streamOptions !== undefined && !stream) {
    return invalid("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options');
  }
  const maxTokens = numberField(body, 'max_completion_tokens') ?? numberField(body, 'max_tokens');
  if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || maxTokens < 1)) {
    const param = body.max_completion_tokens !== undefined ? 'max_completion_tokens' : 'max_tokens';
    return invalid(`Invalid '${param}': integer below minimum value. Expected a value >= 1, but got ${maxTokens} instead.`, param, 'integer_below_min_value');
  }
  const tools = Array.isArray(body.tools) ? body.tools.filter((tool): tool is JsonRecord => isRecord(tool) && isRecord(tool.function)) : [];
  const responseFormat = recordField(body, 'response_format');
  if (responseFormat?.type === 'json_schema' && !isRecord(responseFormat.json_schema)) {
    return invalid("Missing required parameter: 'response_format.json_schema'.", 'response_format.json_schema', 'missing_required_parameter');
  }
  return {
    model: body.model,
    messages: checked,
    n,
    stream,
    includeUsage: streamOptions?.include_usage === true,
    maxTokens,
    stops: stringList(body.stop),
    responseFormat,
    tools,
    toolChoice: body.tool_choice,
  };
}

function checkMessages(messages: unknown[]): JsonRecord[] | Invalid {
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index];
    if (!isRecord(message)) {
      return invalid(`Invalid type for 'messages[${index}]': expected an object, but got something else instead.`, `messages[${index}]`, 'invalid_type');
    }
    const role = message.role;
    if (typeof role !== 'string') return invalid(`Missing required parameter: 'messages[${index}].role'.`, `messages[${index}].role`, 'missing_required_parameter');
    if (!ROLES.has(role)) {
      return invalid(
        `Invalid value: '${role}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`,
        `messages[${index}].role`,
        'invalid_value',
      );
    }
    if (role === 'tool' && typeof message.tool_call_id !== 'string') {
      return invalid(`Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.`, `messages[${index}].tool_call_id`);
    }
    const content = message.content;
    const contentOptional = role === 'assistant';
    if ((content === undefined || content === null) && !contentOptional) {
      return invalid(`Missing required parameter: 'messages[${index}].content'.`, `messages[${index}].content`, 'missing_required_parameter');
    }
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      return invalid(
        `Invalid type for 'messages[${index}].content': expected one of a string or array of objects, but got ${typeof content} instead.`,
        `messages[${index}].content`,
        'invalid_type',
      );
    }
  }
  return messages as JsonRecord[];
}
