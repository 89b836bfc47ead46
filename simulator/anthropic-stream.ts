// Streaming messages (PROTOCOLS 1.9): `event: <name>\ndata: <json>\n\n` frames in the vendor's order.
// message_start (usage with output_tokens 1) → per block: content_block_start (a ping after the first),
// `streamChunks` deltas (text_delta / thinking_delta / input_json_delta: the "content chunks" faults
// count), a signature_delta for thinking, content_block_stop → message_delta (cumulative usage) → message_stop.

import type { Exchange, StreamFrame } from './exchange.ts';
import { SSE_HEADERS, writeStream } from './exchange.ts';
import { messageBody, type MessagePlan } from './anthropic-message-body.ts';
import type { AnthropicBlock } from './anthropic-reply.ts';
import { splitIntoChunks } from './text.ts';
import { ANTHROPIC_OVERLOADED_EVENT } from './vendor-errors.ts';

function event(name: string, body: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(body)}\n\n`;
}

const PING_FRAME = event('ping', { type: 'ping' });
const ERROR_FRAME = event('error', ANTHROPIC_OVERLOADED_EVENT);

export async function writeMessageStream(exchange: Exchange, plan: MessagePlan, requestId: string): Promise<void> {
  const { options } = exchange.state;
  const { usage, reply } = plan;
  const frames: StreamFrame[] = [
    { data: event('message_start', { type: 'message_start', message: messageBody(plan, [], { ...usage, output_tokens: 1 }, false) }), lead: true },
  ];
  if (reply.content.length === 0) frames.push({ data: PING_FRAME, lead: true });
  reply.content.forEach((block, index) => blockFrames(frames, block, index, options.streamChunks));
  frames.push({
    data: event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: reply.stopReason, stop_sequence: reply.stopSequence, stop_details: null },
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
      },
    }),
  });
  frames.push({ data: event('message_stop', { type: 'message_stop' }) });
  const fault = exchange.fault;
  await writeStream(exchange.response, { ...SSE_HEADERS, 'request-id': requestId }, frames, {
    chunkDelayMs: options.chunkDelayMs,
    cutAfterChunks: fault?.cutAfterChunks,
    errorAfterChunks: fault?.errorEventAfterChunks,
    errorFrame: ERROR_FRAME,
  });
}

function blockFrames(frames: StreamFrame[], block: AnthropicBlock, index: number, streamChunks: number): void {
  const lead = index === 0;
  const delta = (body: Record<string, unknown>): string => event('content_block_delta', { type: 'content_block_delta', index, delta: body });
  const start = (contentBlock: Record<string, unknown>): void => {
    frames.push({ data: event('content_block_start', { type: 'content_block_start', index, content_block: contentBlock }), lead });
    if (lead) frames.push({ data: PING_FRAME, lead });
  };
  switch (block.type) {
    case 'thinking':
      start({ type: 'thinking', thinking: '', signature: '' });
      for (const piece of splitIntoChunks(block.thinking, streamChunks)) frames.push({ data: delta({ type: 'thinking_delta', thinking: piece }), content: true });
      frames.push({ data: delta({ type: 'signature_delta', signature: block.signature }) });
      break;
    case 'text':
      start({ type: 'text', text: '' });
      for (const piece of splitIntoChunks(block.text, streamChunks)) frames.push({ data: delta({ type: 'text_delta', text: piece }), content: true });
      break;
    case 'tool_use':
      start({ type: 'tool_use', id: block.id, name: block.name, input: {} });
      for (const piece of splitIntoChunks(JSON.stringify(block.input), streamChunks)) {
        frames.push({ data: delta({ type: 'input_json_delta', partial_json: piece }), content: true });
      }
      break;
  }
  frames.push({ data: event('content_block_stop', { type: 'content_block_stop', index }) });
}
