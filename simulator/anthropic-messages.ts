// POST /v1/messages and POST /v1/messages/count_tokens (PROTOCOLS 1.2–1.11).
// Reply rules: anthropic-reply.ts; token and cache rules: anthropic-prompt.ts; stream framing: anthropic-stream.ts.

import type { Exchange } from './exchange.ts';
import { sendJson } from './exchange.ts';
import { anthropicId, messageBody, type MessagePlan } from './anthropic-message-body.ts';
import { anthropicCacheUsage, anthropicPromptParts } from './anthropic-prompt.ts';
import { buildAnthropicReply, chooseAnthropicTool } from './anthropic-reply.ts';
import { parseMessagesRequest } from './anthropic-request.ts';
import { writeMessageStream } from './anthropic-stream.ts';
import { anthropicError } from './vendor-errors.ts';

export async function handleMessages(exchange: Exchange, requestId: string): Promise<void> {
  const headers = { 'request-id': requestId };
  const request = parseMessagesRequest(exchange.json, false);
  if (typeof request === 'string') return sendJson(exchange.response, 400, anthropicError('invalid_request_error', request, requestId), headers);
  if (request.model.startsWith('missing-')) {
    return sendJson(exchange.response, 404, anthropicError('not_found_error', `model: ${request.model}`, requestId), headers);
  }
  const tool = chooseAnthropicTool(request.body, request.messages);
  if (typeof tool === 'string') return sendJson(exchange.response, 400, anthropicError('invalid_request_error', tool, requestId), headers);
  const { state } = exchange;
  const sequence = state.nextSequence();
  const reply = buildAnthropicReply(request.body, request.messages, tool, request.maxTokens ?? 0, state.options.replyTokens, anthropicId('toolu', sequence));
  const cache = anthropicCacheUsage(state.promptCache, request.model, anthropicPromptParts(request.body));
  const plan: MessagePlan = {
    id: anthropicId('msg', sequence),
    model: request.model,
    reply,
    usage: {
      ...cache,
      output_tokens: reply.outputTokens,
      server_tool_use: null,
      service_tier: 'standard',
      inference_geo: null,
      output_tokens_details: null,
    },
  };
  if (request.body.stream === true) return writeMessageStream(exchange, plan, requestId);
  sendJson(exchange.response, 200, messageBody(plan, plan.reply.content, plan.usage), headers);
}

export function handleCountTokens(exchange: Exchange, requestId: string): void {
  const headers = { 'request-id': requestId };
  const request = parseMessagesRequest(exchange.json, true);
  if (typeof request === 'string') return sendJson(exchange.response, 400, anthropicError('invalid_request_error', request, requestId), headers);
  if (request.model.startsWith('missing-')) {
    return sendJson(exchange.response, 404, anthropicError('not_found_error', `model: ${request.model}`, requestId), headers);
  }
  const inputTokens = anthropicPromptParts(request.body).reduce((sum, part) => sum + part.tokens, 0);
  sendJson(exchange.response, 200, { input_tokens: inputTokens }, headers);
}
