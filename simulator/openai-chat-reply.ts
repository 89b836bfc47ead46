// POST /v1/chat/completions: deterministic completions, tool calls and structured output.
//
// Reply of each choice (all n choices are identical):
// - tools given, tool_choice not "none" and the last message not a `tool` message → one call to the
//   tool named by tool_choice, else the first tool; arguments = JSON of sampleFromSchema(parameters);
//   finish_reason `tool_calls`;
// - otherwise text: after a `tool` message `toolResultReplyText(its content)`; with response_format
//   json_object `{}`; json_schema → JSON of sampleFromSchema(schema); else replyText(last user text).
// Then `stop` cuts before the earliest stop string and the max-tokens cap truncates (finish `length`).
// completion_tokens = Σ over choices of countTokens(content or arguments).

import { isRecord, type JsonRecord } from './json-narrow.ts';
import { sampleFromSchema } from './json-sample.ts';
import { openAiContentText, openAiLastUserText } from './openai-chat-prompt.ts';
import type { ChatRequest } from './openai-chat-request.ts';
import { countTokens, finishText, replyText, toolResultReplyText } from './text.ts';

export const SYSTEM_FINGERPRINT = 'fp_simulator';

export interface ChatToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ChatChoiceReply {
  /** Text content; null for a tool call. */
  content: string | null;
  toolCall: ChatToolCall | undefined;
  finishReason: 'stop' | 'length' | 'tool_calls';
  completionTokens: number;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

export interface ChatCompletionPlan {
  id: string;
  created: number;
  model: string;
  choices: ChatChoiceReply[];
  usage: ChatUsage;
}

/** The tool to call, undefined for a text reply, or an Error when tool_choice names an unknown tool. */
export function chooseTool(request: ChatRequest): JsonRecord | undefined | Error {
  if (request.tools.length === 0 || request.toolChoice === 'none') return undefined;
  if (request.messages.at(-1)?.role === 'tool') return undefined;
  const choice = request.toolChoice;
  if (isRecord(choice) && isRecord(choice.function) && typeof choice.function.name === 'string') {
    const name = choice.function.name;
    const named = request.tools.find((tool) => isRecord(tool.function) && tool.function.name === name);
    return named ?? new Error(`Invalid value for 'tool_choice': tool '${name}' is not one of the given tools.`);
  }
  return request.tools[0];
}

export function buildChoice(request: ChatRequest, tool: JsonRecord | undefined, replyTokens: number, sequence: number): ChatChoiceReply {
  const fn = tool !== undefined && isRecord(tool.function) ? tool.function : undefined;
  if (fn !== undefined) {
    const full = JSON.stringify(sampleFromSchema(fn.parameters ?? { type: 'object' }));
    const finished = finishText(full, [], request.maxTokens);
    return {
      content: null,
      toolCall: { id: `call_sim${sequence}`, name: typeof fn.name === 'string' ? fn.name : 'tool', arguments: finished.text },
      finishReason: finished.reason === 'max_tokens' ? 'length' : 'tool_calls',
      completionTokens: countTokens(finished.text),
    };
  }
  const finished = finishText(fullText(request, replyTokens), request.stops, request.maxTokens);
  return {
    content: finished.text,
    toolCall: undefined,
    finishReason: finished.reason === 'max_tokens' ? 'length' : 'stop',
    completionTokens: countTokens(finished.text),
  };
}

function fullText(request: ChatRequest, replyTokens: number): string {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return toolResultReplyText(openAiContentText(last.content));
  const format = request.responseFormat;
  if (format?.type === 'json_object') return '{}';
  if (format?.type === 'json_schema' && isRecord(format.json_schema)) return JSON.stringify(sampleFromSchema(format.json_schema.schema));
  return replyText(openAiLastUserText(request.messages), replyTokens);
}

