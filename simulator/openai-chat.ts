// POST /v1/chat/completions: validation, usage accounting and the non-stream response body.
// The reply rules live in openai-chat-reply.ts, the stream framing in openai-chat-stream.ts.

import type { Exchange } from './exchange.ts';
import { sendJson, unixSeconds } from './exchange.ts';
import { isRecord, type JsonRecord } from './json-narrow.ts';
import { openAiCachedTokens, openAiMessageTokens, openAiToolsTokens } from './openai-chat-prompt.ts';
import { buildChoice, chooseTool, SYSTEM_FINGERPRINT, type ChatCompletionPlan, type ChatUsage } from './openai-chat-reply.ts';
import { parseChatRequest, type ChatRequest } from './openai-chat-request.ts';
import { writeChatStream } from './openai-chat-stream.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export async function handleChatCompletions(exchange: Exchange): Promise<void> {
  const request = parseChatRequest(exchange.json);
  if ('error' in request) return sendJson(exchange.response, 400, request);
  if (request.model.startsWith('missing-')) return sendJson(exchange.response, 404, openAiModelNotFound(request.model));
  const toolCallName = chooseTool(request);
  if (toolCallName instanceof Error) {
    return sendJson(exchange.response, 400, openAiError(toolCallName.message, 'invalid_request_error', 'tool_choice'));
  }
  const sequence = exchange.state.nextSequence();
  const reply = buildChoice(request, toolCallName, exchange.state.options.replyTokens, sequence);
  const plan: ChatCompletionPlan = {
    id: `chatcmpl-${sequence}`,
    created: unixSeconds(),
    model: request.model,
    choices: Array.from({ length: request.n }, () => reply),
    usage: chatUsage(exchange, request, reply.completionTokens * request.n),
  };
  if (request.stream) return writeChatStream(exchange, plan, request.includeUsage);
  sendJson(exchange.response, 200, completionBody(plan));
}

function chatUsage(exchange: Exchange, request: ChatRequest, completionTokens: number): ChatUsage {
  const messageTokens = request.messages.map(openAiMessageTokens);
  let promptTokens = openAiToolsTokens(isRecord(exchange.json) ? exchange.json.tools : undefined);
  for (const tokens of messageTokens) promptTokens += tokens;
  const cached = openAiCachedTokens(exchange.state.promptCache, request.model, request.messages, messageTokens, promptTokens);
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
  };
}

function completionBody(plan: ChatCompletionPlan): JsonRecord {
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    choices: plan.choices.map((choice, index) => ({
      index,
      message: {
        role: 'assistant',
        content: choice.content,
        refusal: null,
        annotations: [],
        ...(choice.toolCall === undefined
          ? {}
          : { tool_calls: [{ id: choice.toolCall.id, type: 'function', function: { name: choice.toolCall.name, arguments: choice.toolCall.arguments } }] }),
      },
      logprobs: null,
      finish_reason: choice.finishReason,
    })),
    usage: plan.usage,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}
