// OpenAI Responses API: POST /v1/responses (stream and not), GET and DELETE /v1/responses/{id}.
//
// The reply is the chat endpoint's reply to the equivalent chat request (openai-responses-request.ts
// translates items, tools, tool_choice and text.format): one `message` item with one `output_text` part, or
// one `function_call` item (call_id `call_sim<n>`). The simulator models no OpenAI reasoning, so there are no
// reasoning items and reasoning_tokens is 0. A reply cut by max_output_tokens gives status `incomplete`
// with incomplete_details {reason: "max_output_tokens"}.
// Usage: input_tokens = the chat prompt-token rule over the translated messages + countTokens(JSON of `tools`)
// when tools are given; cached_tokens by the chat prompt-cache rule (openai-chat-prompt.ts); cache_write_tokens 0;
// output_tokens = countTokens(text or arguments); reasoning_tokens 0. A stored response also remembers its
// conversation with its output as a prefix, so a follow-up on previous_response_id (≥ 1024 prompt tokens) reads
// floor(tokens of the earlier turns / 128) × 128 cached tokens.
// `previous_response_id` continues a stored response: its input items and output items come before this
// request's input; its instructions are not carried over. Responses are stored unless `store` is false.
// Model ids starting with `missing-` or `claude-` do not exist here (400 model_not_found, as the vendor).

import type { Exchange } from './exchange.ts';
import { sendJson, unixSeconds } from './exchange.ts';
import type { JsonRecord } from './json-narrow.ts';
import { openAiCachedTokens, openAiMessageTokens, openAiToolsTokens } from './openai-chat-prompt.ts';
import { buildChoice, chooseTool, type ChatChoiceReply } from './openai-chat-reply.ts';
import { inputItems, itemsToChatMessages, parseResponsesRequest, toChatRequest, type ResponsesRequest } from './openai-responses-request.ts';
import { writeResponseStream } from './openai-responses-stream.ts';
import { prefixDigest, startPrefixHash } from './prompt-cache.ts';
import { openAiError } from './vendor-errors.ts';

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** Everything a response body and its stream are built from. */
export interface ResponsePlan {
  id: string;
  createdAt: number;
  request: ResponsesRequest;
  /** The finished output item (message or function_call). */
  item: JsonRecord;
  reply: ChatChoiceReply;
  status: 'completed' | 'incomplete';
  usage: ResponsesUsage;
}

export function responseNotFound(id: string): { error: ReturnType<typeof openAiError>['error'] } {
  return openAiError(`Response with id '${id}' not found.`, 'invalid_request_error');
}

function modelMissing(model: string): boolean {
  return model.startsWith('missing-') || model.startsWith('claude-');
}

export async function handleCreateResponse(exchange: Exchange): Promise<void> {
  const request = parseResponsesRequest(exchange.json);
  if ('error' in request) return sendJson(exchange.response, 400, request);
  if (modelMissing(request.model)) {
    return sendJson(exchange.response, 400, openAiError(`The requested model '${request.model}' does not exist.`, 'invalid_request_error', 'model', 'model_not_found'));
  }
  const store = exchange.state.responses;
  let history: JsonRecord[] = [];
  if (request.previousResponseId !== null) {
    const previous = store.get(request.previousResponseId);
    if (previous === undefined) {
      return sendJson(exchange.response, 400, openAiError(
        `Previous response with id '${request.previousResponseId}' not found.`, 'invalid_request_error', 'previous_response_id', 'previous_response_not_found',
      ));
    }
    history = [...previous.inputItems, ...previous.outputItems];
  }
  const items = [...history, ...inputItems(request.input)];
  const messages = itemsToChatMessages(request.instructions, items);
  const chat = toChatRequest(request, messages);
  const tool = chooseTool(chat);
  if (tool instanceof Error) {
    return sendJson(exchange.response, 400, openAiError(
      `Tool choice '${String((request.toolChoice as JsonRecord).name)}' not found in 'tools' parameter.`, 'invalid_request_error', 'tool_choice',
    ));
  }
  const sequence = exchange.state.nextSequence();
  const reply = buildChoice(chat, tool, exchange.state.options.replyTokens, sequence);
  const plan: ResponsePlan = {
    id: `resp_sim${String(sequence).padStart(8, '0')}`,
    createdAt: unixSeconds(),
    request,
    item: outputItem(reply, sequence),
    reply,
    status: reply.finishReason === 'length' ? 'incomplete' : 'completed',
    usage: responsesUsage(exchange, request, messages, reply.completionTokens),
  };
  const final = responseBody(plan, 'final');
  if (request.store) {
    store.put(plan.id, { body: final, inputItems: items, outputItems: [plan.item] });
    rememberConversation(exchange, request.model, [...messages, ...itemsToChatMessages(null, [plan.item])]);
  }
  if (request.stream) return writeResponseStream(exchange, plan);
  sendJson(exchange.response, 200, final);
}

export function handleRetrieveResponse(exchange: Exchange): void {
  const id = exchange.params.id ?? '';
  const stored = exchange.state.responses.get(id);
  if (stored === undefined) return sendJson(exchange.response, 404, responseNotFound(id));
  sendJson(exchange.response, 200, stored.body);
}

export function handleDeleteResponse(exchange: Exchange): void {
  const id = exchange.params.id ?? '';
  if (!exchange.state.responses.delete(id)) return sendJson(exchange.response, 404, responseNotFound(id));
  sendJson(exchange.response, 200, { id, object: 'response', deleted: true });
}

function responsesUsage(exchange: Exchange, request: ResponsesRequest, messages: JsonRecord[], outputTokens: number): ResponsesUsage {
  const messageTokens = messages.map(openAiMessageTokens);
  let inputTokens = openAiToolsTokens(request.tools);
  for (const tokens of messageTokens) inputTokens += tokens;
  const cached = openAiCachedTokens(exchange.state.promptCache, request.model, messages, messageTokens, inputTokens);
  return {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: cached, cache_write_tokens: 0 },
    output_tokens: outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + outputTokens,
  };
}

/** A stored response's conversation, its output included, is a cached prefix for a follow-up on it. */
function rememberConversation(exchange: Exchange, model: string, messages: readonly JsonRecord[]): void {
  const hash = startPrefixHash(model);
  for (const message of messages) hash.update(JSON.stringify(message)).update('\u0000');
  exchange.state.promptCache.remember(prefixDigest(hash));
}

/** The finished output item: a `message` with one output_text part, or a `function_call`. */
function outputItem(reply: ChatChoiceReply, sequence: number): JsonRecord {
  const status = reply.finishReason === 'length' ? 'incomplete' : 'completed';
  const call = reply.toolCall;
  if (call !== undefined) {
    return { type: 'function_call', id: `fc_sim${String(sequence).padStart(8, '0')}`, call_id: call.id, name: call.name, arguments: call.arguments, status };
  }
  return { type: 'message', id: `msg_sim${String(sequence).padStart(8, '0')}`, status, role: 'assistant', content: [outputTextPart(reply.content ?? '')] };
}

export function outputTextPart(text: string): JsonRecord {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

function echoTools(tools: readonly JsonRecord[]): JsonRecord[] {
  return tools.map((tool) => tool.type !== 'function'
    ? tool
    : { type: 'function', description: tool.description ?? null, name: tool.name, parameters: tool.parameters ?? null, strict: tool.strict ?? true });
}

/**
 * The response object. `start` is its state in response.created / response.in_progress (in_progress, no output,
 * usage null); `final` is what the create call returns, response.completed carries and GET answers.
 */
export function responseBody(plan: ResponsePlan, phase: 'start' | 'final'): JsonRecord {
  const { request } = plan;
  const final = phase === 'final';
  return {
    id: plan.id,
    object: 'response',
    created_at: plan.createdAt,
    status: final ? plan.status : 'in_progress',
    completed_at: final && plan.status === 'completed' ? plan.createdAt : null,
    error: null,
    incomplete_details: final && plan.status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions,
    max_output_tokens: request.maxOutputTokens,
    model: request.model,
    output: final ? [plan.item] : [],
    parallel_tool_calls: request.parallelToolCalls,
    previous_response_id: request.previousResponseId,
    reasoning: request.reasoning,
    store: request.store,
    temperature: request.temperature,
    text: request.text,
    tool_choice: request.toolChoice,
    tools: echoTools(request.tools),
    top_p: request.topP,
    truncation: request.truncation,
    usage: final ? plan.usage : null,
    user: request.user,
    metadata: request.metadata,
  };
}
