// The content of a simulated Anthropic reply.
//
// - `thinking.type` enabled or adaptive → a thinking block first: thinking = thinkingText(last user text)
//   ("" when `display` is "omitted", still counted), signature = "Sim" + base64 SHA-256 of that text.
// - client tools given (no `type`, or type "custom"), tool_choice not "none" and the last message not
//   carrying a tool_result → a tool_use block (`toolu_…`) for the tool named by tool_choice, else the first,
//   input = sampleFromSchema(input_schema); stop_reason `tool_use`.
// - otherwise a text block: after a tool_result `toolResultReplyText(result text)`; with
//   output_config.format json_schema the JSON of sampleFromSchema(schema); else replyText(last user text).
//   stop_sequences cut it (stop_reason `stop_sequence`); max_tokens, shared with thinking, truncates it
//   (stop_reason `max_tokens`; a tool call that does not fit is dropped). An empty text gives no block.
//   A text block has no `citations` key: the vendor omits it when there are none (never `citations: null`).
// output_tokens = countTokens(thinking) + countTokens(text or JSON of the tool input).

import { createHash } from 'node:crypto';
import { isRecord, recordField, stringList, type JsonRecord } from './json-narrow.ts';
import { sampleFromSchema } from './json-sample.ts';
import { countTokens, finishText, replyText, thinkingText, toolResultReplyText, truncateToTokens } from './text.ts';

export type AnthropicBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';

export interface AnthropicReply {
  content: AnthropicBlock[];
  stopReason: StopReason;
  stopSequence: string | null;
  outputTokens: number;
}

/** Text of a content value: the string, or its text blocks joined with "\n". */
export function anthropicContentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const block of content) if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
  return texts.join('\n');
}

/** Text of the last user message, ignoring tool results ("" when there is none). */
export function anthropicLastUserText(messages: readonly JsonRecord[]): string {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index];
    if (message?.role === 'user') return anthropicContentText(message.content);
  }
  return '';
}

function lastToolResult(messages: readonly JsonRecord[]): JsonRecord | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'user' || !Array.isArray(last.content)) return undefined;
  return last.content.find((block): block is JsonRecord => isRecord(block) && block.type === 'tool_result');
}

export function thinkingSignature(text: string): string {
  return `Sim${createHash('sha256').update(text).digest('base64')}`;
}

/** The tool to call (undefined for a text reply), or an error message when tool_choice names no given tool. */
export function chooseAnthropicTool(body: JsonRecord, messages: readonly JsonRecord[]): JsonRecord | undefined | string {
  const tools = Array.isArray(body.tools)
    ? body.tools.filter((tool): tool is JsonRecord => isRecord(tool) && typeof tool.name === 'string' && (tool.type === undefined || tool.type === 'custom'))
    : [];
  const choice = recordField(body, 'tool_choice');
  if (tools.length === 0 || choice?.type === 'none' || lastToolResult(messages) !== undefined) return undefined;
  if (choice?.type === 'tool') {
    const named = tools.find((tool) => tool.name === choice.name);
    return named ?? `tool_choice: Tool '${String(choice.name)}' not found in the list of tools`;
  }
  return tools[0];
}

export function buildAnthropicReply(body: JsonRecord, messages: readonly JsonRecord[], tool: JsonRecord | undefined, maxTokens: number, replyTokens: number, toolId: string): AnthropicReply {
  const userText = anthropicLastUserText(messages);
  const content: AnthropicBlock[] = [];
  let remaining = maxTokens;
  const thinking = recordField(body, 'thinking');
  if (thinking?.type === 'enabled' || thinking?.type === 'adaptive') {
    const thought = truncateToTokens(thinkingText(userText), remaining);
    const shown = thinking.display === 'omitted' ? '' : thought;
    content.push({ type: 'thinking', thinking: shown, signature: thinkingSignature(thought) });
    remaining -= countTokens(thought);
  }
  const used = maxTokens - remaining;
  if (tool !== undefined) {
    const input = sampleFromSchema(tool.input_schema ?? { type: 'object' });
    const tokens = countTokens(JSON.stringify(input));
    if (tokens > remaining) return { content, stopReason: 'max_tokens', stopSequence: null, outputTokens: used };
    content.push({ type: 'tool_use', id: toolId, name: String(tool.name), input });
    return { content, stopReason: 'tool_use', stopSequence: null, outputTokens: used + tokens };
  }
  const finished = finishText(fullText(body, messages, userText, replyTokens), stringList(body.stop_sequences), remaining);
  if (finished.text !== '') content.push({ type: 'text', text: finished.text });
  const stopReason: StopReason = finished.reason === 'stop' ? 'end_turn' : finished.reason;
  return { content, stopReason, stopSequence: finished.stopSequence, outputTokens: used + countTokens(finished.text) };
}

function fullText(body: JsonRecord, messages: readonly JsonRecord[], userText: string, replyTokens: number): string {
  const toolResult = lastToolResult(messages);
  if (toolResult !== undefined) return toolResultReplyText(anthropicContentText(toolResult.content));
  const format = recordField(recordField(body, 'output_config') ?? {}, 'format');
  if (format?.type === 'json_schema') return JSON.stringify(sampleFromSchema(format.schema));
  return replyText(userText, replyTokens);
}
