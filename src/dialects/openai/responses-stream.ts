import type { ChatChunk, ChatUsage, JsonObject } from '../../core/chat-types.ts';
import { newId } from '../../lib/ids.ts';
import {
  customInput,
  incompleteReason,
  messageItem,
  outputText,
  reasoningItem,
  renderResponse,
  responseUsage,
  toolCallItem,
  type ResponseContext,
} from './responses-render.ts';

/** One Responses stream event: its `type` is also the SSE event name. */
export type ResponseStreamEvent = JsonObject & { type: string };

type OpenItem =
  | { kind: 'reasoning'; index: number; id: string; text: string; signature: string }
  | { kind: 'message'; index: number; id: string; text: string }
  | { kind: 'function'; index: number; id: string; callId: string; name: string; arguments: string; chatIndex: number; custom: boolean };

/**
 * Renders a canonical chat stream (OpenAI chat chunks, as the Claude adapter produces them) as Responses stream events
 * (openai-node: ResponseStreamEvent), in the vendor's order: `response.created`, `response.in_progress`; per output item
 * `output_item.added`, its part and deltas, their `.done` events and `output_item.done`; then `response.completed` (or
 * `response.incomplete`) carrying the whole response with usage. Items are sequential, as Claude's content blocks are:
 * a new item closes the open one. Every event has a `sequence_number`, counting from 0. Single use: one per stream.
 * A call of a custom tool is a `custom_tool_call` item whose whole `input` comes in one
 * `response.custom_tool_call_input.delta` when it ends (Claude streams it as JSON arguments, which are not the text).
 */
export class ResponsesStreamRenderer {
  private sequence = 0;
  private readonly output: JsonObject[] = [];
  private open: OpenItem | undefined;
  private finishReason: string | null = null;
  private reasoningText = '';
  private started = false;

  constructor(private readonly context: ResponseContext) {}

  /** The opening events; `warnings` (a redirected model) ride on the first. */
  start(): ResponseStreamEvent[] {
    this.started = true;
    const shell = renderResponse(this.context, { status: 'in_progress', output: [] });
    const created = this.event('response.created', { response: shell });
    if (this.context.warnings) created.warnings = this.context.warnings;
    return [created, this.event('response.in_progress', { response: shell })];
  }

  get hasStarted(): boolean {
    return this.started;
  }

  /** The events for one chat chunk (usage chunks and the role chunk give none). */
  chunk(chunk: ChatChunk): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') events.push(...this.reasoning(delta.reasoning_content));
      if (Array.isArray(delta.thinking_blocks)) {
        for (const block of delta.thinking_blocks as JsonObject[]) {
          if (typeof block.signature === 'string') events.push(...this.signature(block.signature));
        }
      }
      if (typeof delta.content === 'string' && delta.content !== '') events.push(...this.text(delta.content));
      if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as JsonObject[]) events.push(...this.toolCall(call));
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return events;
  }

  /** The closing events: the open item's `.done` events and `response.completed` / `response.incomplete` with usage. */
  finish(usage: ChatUsage, reasoningTokens: number): { events: ResponseStreamEvent[]; response: JsonObject } {
    const events = this.close();
    const incomplete = incompleteReason(this.finishReason);
    const response = renderResponse(this.context, {
      status: incomplete ? 'incomplete' : 'completed',
      output: this.output,
      usage: responseUsage(usage, reasoningTokens),
      incomplete,
    });
    events.push(this.event(incomplete ? 'response.incomplete' : 'response.completed', { response }));
    return { events, response };
  }

  /** A vendor error inside the stream, as the `error` event. */
  error(error: JsonObject): ResponseStreamEvent {
    return this.event('error', {
      code: typeof error.code === 'string' ? error.code : typeof error.type === 'string' ? error.type : null,
      message: typeof error.message === 'string' ? error.message : 'The upstream model provider failed.',
      param: typeof error.param === 'string' ? error.param : null,
    });
  }

  /** The output items so far (finished ones), and the thinking text seen, for estimates of a stream cut short. */
  get items(): readonly JsonObject[] {
    return this.output;
  }

  get thinking(): string {
    return this.reasoningText;
  }

  private reasoning(piece: string): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    let item = this.open;
    if (item?.kind !== 'reasoning') {
      events.push(...this.close());
      item = { kind: 'reasoning', index: this.output.length, id: newId('reasoning'), text: '', signature: '' };
      this.open = item;
      const at = { item_id: item.id, output_index: item.index };
      events.push(this.event('response.output_item.added', { output_index: item.index, item: reasoningItem(item.id, '', null, false) }));
      events.push(this.event('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } }));
    }
    item.text += piece;
    this.reasoningText += piece;
    events.push(this.event('response.reasoning_summary_text.delta', { item_id: item.id, output_index: item.index, summary_index: 0, delta: piece }));
    return events;
  }

  private signature(signature: string): ResponseStreamEvent[] {
    // The signature ends a thinking block; a block with no text shown (omitted thinking) still gets its item.
    if (this.open?.kind !== 'reasoning') {
      const events = this.close();
      const item: OpenItem = { kind: 'reasoning', index: this.output.length, id: newId('reasoning'), text: '', signature };
      this.open = item;
      events.push(this.event('response.output_item.added', { output_index: item.index, item: reasoningItem(item.id, '', null, false) }));
      events.push(this.event('response.reasoning_summary_part.added', { item_id: item.id, output_index: item.index, summary_index: 0, part: { type: 'summary_text', text: '' } }));
      return events;
    }
    this.open.signature += signature;
    return [];
  }

  private text(piece: string): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    let item = this.open;
    if (item?.kind !== 'message') {
      events.push(...this.close());
      item = { kind: 'message', index: this.output.length, id: newId('responseMessage'), text: '' };
      this.open = item;
      events.push(this.event('response.output_item.added', { output_index: item.index, item: messageItem(item.id, '', 'in_progress') }));
      events.push(this.event('response.content_part.added', { item_id: item.id, output_index: item.index, content_index: 0, part: outputText('') }));
    }
    item.text += piece;
    events.push(this.event('response.output_text.delta', { item_id: item.id, output_index: item.index, content_index: 0, delta: piece, logprobs: [] }));
    return events;
  }

  private toolCall(call: JsonObject): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    const fn = (call.function ?? {}) as JsonObject;
    const chatIndex = typeof call.index === 'number' ? call.index : 0;
    let item = this.open;
    if (typeof call.id === 'string' && (item?.kind !== 'function' || item.chatIndex !== chatIndex)) {
      events.push(...this.close());
      const name = String(fn.name ?? '');
      const custom = this.context.toolNames?.get(name)?.custom === true;
      item = { kind: 'function', index: this.output.length, id: newId(custom ? 'customToolCall' : 'functionCall'), callId: call.id, name, arguments: '', chatIndex, custom };
      this.open = item;
      events.push(this.event('response.output_item.added', { output_index: item.index, item: toolCallItem(item.id, { ...item, arguments: '' }, 'in_progress', this.context.toolNames) }));
    }
    if (item?.kind !== 'function' || typeof fn.arguments !== 'string' || fn.arguments === '') return events;
    item.arguments += fn.arguments;
    if (item.custom) return events;
    events.push(this.event('response.function_call_arguments.delta', { item_id: item.id, output_index: item.index, delta: fn.arguments }));
    return events;
  }

  /** Ends the open item: its `.done` events, and the finished item joins the output (incomplete if the answer was cut in it). */
  private close(): ResponseStreamEvent[] {
    const item = this.open;
    if (!item) return [];
    this.open = undefined;
    const at = { item_id: item.id, output_index: item.index };
    const events: ResponseStreamEvent[] = [];
    let done: JsonObject;
    if (item.kind === 'reasoning') {
      events.push(this.event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text }));
      events.push(this.event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text: item.text } }));
      done = reasoningItem(item.id, item.text, item.signature, true);
    } else if (item.kind === 'message') {
      events.push(this.event('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] }));
      events.push(this.event('response.content_part.done', { ...at, content_index: 0, part: outputText(item.text) }));
      done = messageItem(item.id, item.text, incompleteReason(this.finishReason) ? 'incomplete' : 'completed');
    } else {
      const args = item.arguments === '' ? '{}' : item.arguments;
      const status = incompleteReason(this.finishReason) ? 'incomplete' : 'completed';
      done = toolCallItem(item.id, { ...item, arguments: args }, status, this.context.toolNames);
      if (item.custom) {
        const input = customInput(args);
        events.push(this.event('response.custom_tool_call_input.delta', { ...at, delta: input }));
        events.push(this.event('response.custom_tool_call_input.done', { ...at, input }));
      } else {
        events.push(this.event('response.function_call_arguments.done', { ...at, name: done.name as string, arguments: args }));
      }
    }
    this.output.push(done);
    events.push(this.event('response.output_item.done', { output_index: item.index, item: done }));
    return events;
  }

  private event(type: string, fields: JsonObject): ResponseStreamEvent {
    return { type, ...fields, sequence_number: this.sequence++ };
  }
}
