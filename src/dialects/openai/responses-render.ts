import type { ChatMessage, ChatUsage, JsonObject, ThinkingBlock } from '../../core/chat-types.ts';
import { newId } from '../../lib/ids.ts';
import type { ResponsesRequest } from './responses-request.ts';

/**
 * The Response object and its output items as the gateway renders them for translated models, field for field as
 * openai-node types them (src/resources/responses/responses.ts: Response, ResponseOutputMessage, ResponseFunctionToolCall,
 * ResponseReasoningItem, ResponseUsage).
 */

/** What every rendering of one response shares: its id, when it began, the model the client named, the request. */
export interface ResponseContext {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model id the Response names: the one that answered (a fallback's), or the one asked for when retirement redirected it (SPEC 9.6). */
  model: string;
  request: ResponsesRequest;
  /** `warnings` for the body (a redirected model): the whole body, or the first stream event. */
  warnings: JsonObject[] | null;
  /** Claude tool names that stand for a namespaced or custom tool (responses-to-chat.ts); others are plain functions. */
  toolNames?: ToolNames;
}

/** What a Claude tool name stands for: a function or custom tool, maybe inside a `namespace` tool. */
export interface ToolTarget {
  name: string;
  namespace?: string;
  custom: boolean;
}

export type ToolNames = ReadonlyMap<string, ToolTarget>;

/** The one Claude tool name for a tool in a namespace (Claude's names allow no dots): `<namespace>__<name>`. */
export const flatToolName = (namespace: string | null | undefined, name: string): string => (namespace ? `${namespace}__${name}` : name);

/** A custom tool's text from the arguments Claude gave its `input` parameter (the raw arguments if they are not that). */
export function customInput(args: string): string {
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && typeof (parsed as JsonObject).input === 'string') return (parsed as JsonObject).input as string;
  } catch {
    // not JSON: the text as it came
  }
  return args;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** Responses usage from canonical counts: input includes cached tokens; reasoning tokens are part of the output. */
export function responseUsage(usage: ChatUsage, reasoningTokens: number): JsonObject {
  const cached = typeof usage.prompt_tokens_details?.cached_tokens === 'number' ? usage.prompt_tokens_details.cached_tokens : 0;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: cached },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: Math.min(reasoningTokens, usage.completion_tokens) },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

/** Why a response stopped short, from a canonical finish reason; null when it completed. */
export function incompleteReason(finishReason: string | null | undefined): 'max_output_tokens' | 'content_filter' | null {
  if (finishReason === 'length') return 'max_output_tokens';
  if (finishReason === 'content_filter') return 'content_filter';
  return null;
}

/** The Response object; `output` and `usage` as they stand (empty and absent while in progress). */
export function renderResponse(
  context: ResponseContext,
  state: { status: ResponseStatus; output: JsonObject[]; usage?: JsonObject | undefined; incomplete?: string | null; error?: JsonObject | null },
): JsonObject {
  const { request } = context;
  const response: JsonObject = {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    status: state.status,
    background: false,
    error: state.error ?? null,
    incomplete_details: state.incomplete ? { reason: state.incomplete } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: context.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    service_tier: 'default',
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: request.text ?? { format: { type: 'text' } },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: state.usage ?? null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
  return response;
}

export const outputText = (text: string): JsonObject => ({ type: 'output_text', annotations: [], logprobs: [], text });

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed' | 'incomplete'): JsonObject {
  return { id, type: 'message', status, role: 'assistant', content: status === 'in_progress' ? [] : [outputText(text)] };
}

export function functionCallItem(id: string, call: { callId: string; name: string; arguments: string }, status: 'in_progress' | 'completed' | 'incomplete'): JsonObject {
  return { id, type: 'function_call', status, arguments: call.arguments, call_id: call.callId, name: call.name };
}

/**
 * A Claude tool call as the item the client expects: `function_call` (with `namespace` for a namespaced function), or
 * `custom_tool_call` with the text as `input` for a custom tool (openai-node ResponseFunctionToolCall, ResponseCustomToolCall).
 */
export function toolCallItem(id: string, call: { callId: string; name: string; arguments: string }, status: 'in_progress' | 'completed' | 'incomplete', names: ToolNames | undefined): JsonObject {
  const target = names?.get(call.name);
  if (!target) return functionCallItem(id, call, status);
  const namespace = target.namespace ? { namespace: target.namespace } : {};
  if (target.custom) return { id, type: 'custom_tool_call', status, call_id: call.callId, input: status === 'in_progress' ? '' : customInput(call.arguments), name: target.name, ...namespace };
  return { ...functionCallItem(id, { ...call, name: target.name }, status), ...namespace };
}

/** Claude's thinking as a reasoning item: its text as the summary, its signature as `encrypted_content` (sent back by clients). */
export function reasoningItem(id: string, thinking: string, signature: string | null, done: boolean): JsonObject {
  return { id, type: 'reasoning', summary: done ? [{ type: 'summary_text', text: thinking }] : [], encrypted_content: signature || null };
}

/** The output items of a finished (non-stream) canonical answer: reasoning, then the message, then the function calls. */
export function outputItemsFromChat(message: ChatMessage, finishReason: string | null, names?: ToolNames): JsonObject[] {
  const items: JsonObject[] = [];
  const thinking = (message.thinking_blocks ?? []) as ThinkingBlock[];
  for (const block of thinking) items.push(reasoningItem(newId('reasoning'), block.thinking, block.signature, true));
  const text = typeof message.content === 'string' ? message.content : '';
  if (text !== '') items.push(messageItem(newId('responseMessage'), text, 'completed'));
  const calls = (message.tool_calls ?? []) as Array<{ id: string; function: { name: string; arguments: string } }>;
  for (const call of calls) {
    const target = names?.get(call.function.name);
    const id = newId(target?.custom ? 'customToolCall' : 'functionCall');
    items.push(toolCallItem(id, { callId: call.id, name: call.function.name, arguments: call.function.arguments }, 'completed', names));
  }
  // An answer cut short was cut in its last item, as a stream shows it.
  const last = items.at(-1);
  if (last && last.type !== 'reasoning' && incompleteReason(finishReason)) last.status = 'incomplete';
  return items;
}

/** All output text of a response (thinking included), for estimating tokens the vendor did not count. */
export function producedText(items: readonly JsonObject[]): string {
  let text = '';
  for (const item of items) {
    if (item.type === 'message') for (const part of item.content as JsonObject[]) text += String(part.text ?? '');
    else if (item.type === 'function_call') text += `${String(item.name)}${String(item.arguments)}`;
    else if (item.type === 'custom_tool_call') text += `${String(item.name)}${String(item.input)}`;
    else if (item.type === 'reasoning') for (const part of item.summary as JsonObject[]) text += String(part.text ?? '');
  }
  return text;
}
