import type { ChatChunk, ChatStreamEvent, JsonObject } from '../../core/chat-types.ts';
import { UpstreamError } from '../upstream-error.ts';
import { ANTHROPIC_STREAM_EVENT_TYPES, anthropicStreamEventSchema, type AnthropicStreamEvent } from './anthropic-api-schemas.ts';
import { openAiErrorObject } from './anthropic-error.ts';
import { convertAnthropicUsage, type AnthropicUsageCounts } from './convert-from-anthropic-response.ts';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';

/**
 * Reads one SSE `data` payload of a Messages stream. Unknown event types give undefined (the vendor may add some and
 * says to ignore them, PROTOCOLS §1.9); a known event that does not parse is a broken upstream.
 */
export function parseAnthropicStreamEvent(data: string): AnthropicStreamEvent | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new UpstreamError(502, data, 'text/plain', 'upstream sent a frame that is not JSON');
  }
  const type = typeof parsed === 'object' && parsed !== null ? (parsed as JsonObject).type : undefined;
  if (typeof type !== 'string' || !ANTHROPIC_STREAM_EVENT_TYPES.has(type)) return undefined;
  const result = anthropicStreamEventSchema.safeParse(parsed);
  if (!result.success) throw new UpstreamError(502, data, 'application/json', `upstream sent a malformed '${type}' event`);
  return result.data;
}

export interface StreamConversionOptions {
  /** Emit the final `choices: []` usage chunk (the request's `stream_options.include_usage`). */
  includeUsage: boolean;
  /** `created` of every chunk, in Unix seconds. */
  createdSeconds: number;
  /**
   * Pass thinking on (the request asked for reasoning: the Responses path): `reasoning_content` deltas, and the block's
   * signature as a `thinking_blocks` delta when it arrives. Otherwise thinking is dropped.
   */
  reasoning?: boolean;
}

interface ToolBlock {
  toolIndex: number;
  sentArguments: boolean;
}

/**
 * Turns the events of one Anthropic Messages stream into OpenAI chat chunks (PROTOCOLS §1.9 → §2.2), one event at a
 * time, keeping what the conversion needs across events: the message id and model, the OpenAI index of each tool call
 * and the usage so far. Single use: one instance per stream.
 *
 * Output order: a role chunk (message_start); content and tool-call deltas; one finish chunk (the first message_delta
 * with a stop_reason); the usage chunk, when asked for, at message_stop. Usage is message_start's counts overwritten
 * by message_delta's, which are cumulative — adding them up would count the output twice.
 */
export class AnthropicStreamToChunks {
  private id = '';
  private model = '';
  private usage: AnthropicUsageCounts = {};
  private readonly toolBlocks = new Map<number, ToolBlock>();
  private finished = false;

  constructor(private readonly options: StreamConversionOptions) {}

  convert(event: AnthropicStreamEvent): ChatStreamEvent[] {
    switch (event.type) {
      case 'message_start': {
        // Some relays repeat message_start; one OpenAI stream has one role chunk and one id.
        const first = this.id === '';
        if (first) {
          this.id = event.message.id;
          this.model = event.message.model;
        }
        this.usage = { ...event.message.usage };
        return first ? [this.chunk({ role: 'assistant', content: '' })] : [];
      }
      case 'content_block_start':
        return this.blockStart(event.index, event.content_block);
      case 'content_block_delta':
        return this.blockDelta(event.index, event.delta);
      case 'content_block_stop':
        return this.blockStop(event.index);
      case 'message_delta':
        return this.messageDelta(event);
      case 'message_stop':
        return this.options.includeUsage ? [this.usageChunk()] : [];
      case 'error':
        return [{ kind: 'error', error: openAiErrorObject(event.error), raw: JSON.stringify({ type: 'error', error: event.error }) }];
      case 'ping':
        return [];
    }
  }

  private blockStart(index: number, block: Extract<AnthropicStreamEvent, { type: 'content_block_start' }>['content_block']): ChatStreamEvent[] {
    if (block.type === 'text') return block.text === '' ? [] : [this.chunk({ content: block.text })];
    if (block.type === 'thinking') return this.options.reasoning && block.thinking !== '' ? [this.chunk({ reasoning_content: block.thinking })] : [];
    if (block.type !== 'tool_use') return [];
    const toolIndex = this.toolBlocks.size;
    // Client tool blocks start with `input: {}` and send the real input as input_json_delta pieces.
    this.toolBlocks.set(index, { toolIndex, sentArguments: false });
    return [this.chunk({ tool_calls: [{ index: toolIndex, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] })];
  }

  private blockDelta(index: number, delta: Extract<AnthropicStreamEvent, { type: 'content_block_delta' }>['delta']): ChatStreamEvent[] {
    if (delta.type === 'text_delta') return delta.text === '' ? [] : [this.chunk({ content: delta.text })];
    if (delta.type === 'thinking_delta') return this.options.reasoning && delta.thinking !== '' ? [this.chunk({ reasoning_content: delta.thinking })] : [];
    if (delta.type === 'signature_delta') {
      return this.options.reasoning ? [this.chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: delta.signature }] })] : [];
    }
    const tool = this.toolBlocks.get(index);
    if (delta.type !== 'input_json_delta' || !tool || delta.partial_json === '') return [];
    tool.sentArguments = true;
    return [this.toolArguments(tool, delta.partial_json)];
  }

  private blockStop(index: number): ChatStreamEvent[] {
    const tool = this.toolBlocks.get(index);
    // A tool called without arguments sends no input_json_delta; OpenAI clients parse `arguments` as JSON, so give '{}'.
    if (!tool || tool.sentArguments) return [];
    tool.sentArguments = true;
    return [this.toolArguments(tool, '{}')];
  }

  private messageDelta(event: Extract<AnthropicStreamEvent, { type: 'message_delta' }>): ChatStreamEvent[] {
    if (event.usage) {
      for (const [field, value] of Object.entries(event.usage)) {
        if (value !== undefined && value !== null) Object.assign(this.usage, { [field]: value });
      }
    }
    const reason = event.delta.stop_reason;
    if (reason == null || this.finished) return [];
    this.finished = true;
    return [this.chunk({}, mapAnthropicFinishReason(reason))];
  }

  private toolArguments(tool: ToolBlock, piece: string): ChatStreamEvent {
    return this.chunk({ tool_calls: [{ index: tool.toolIndex, function: { arguments: piece } }] });
  }

  private chunk(delta: JsonObject, finishReason: string | null = null): ChatStreamEvent {
    const chunk: ChatChunk = { ...this.head(), choices: [{ index: 0, delta, finish_reason: finishReason }] };
    return { kind: 'chunk', chunk, raw: JSON.stringify(chunk) };
  }

  private usageChunk(): ChatStreamEvent {
    const chunk: ChatChunk = { ...this.head(), choices: [], usage: convertAnthropicUsage(this.usage) };
    return { kind: 'chunk', chunk, raw: JSON.stringify(chunk) };
  }

  private head(): Pick<ChatChunk, 'id' | 'object' | 'model'> & { created: number } {
    return { id: this.id, object: 'chat.completion.chunk', created: this.options.createdSeconds, model: this.model };
  }
}
