// Streaming Responses API: `event: <type>\ndata: <json>\n\n` frames whose `sequence_number` counts from 0.
// response.created → response.in_progress → response.output_item.added → for a message:
// response.content_part.added, `streamChunks` × response.output_text.delta (the "content chunks" faults
// count), response.output_text.done, response.content_part.done; for a function call:
// `streamChunks` × response.function_call_arguments.delta, response.function_call_arguments.done →
// response.output_item.done → response.completed (response.incomplete when max_output_tokens cut the reply).
// No `data: [DONE]`. A fault's in-stream error is the vendor's `error` event
// {type:"error", code:"server_error", message, param:null, sequence_number}.

import type { Exchange, StreamFrame } from './exchange.ts';
import { SSE_HEADERS, writeStream } from './exchange.ts';
import type { JsonRecord } from './json-narrow.ts';
import { outputTextPart, responseBody, type ResponsePlan } from './openai-responses.ts';
import { splitIntoChunks } from './text.ts';
import { OPENAI_STREAM_ERROR } from './vendor-errors.ts';

interface Pending {
  type: string;
  body: JsonRecord;
  content?: boolean;
  lead?: boolean;
}

function frame(type: string, body: JsonRecord, sequence: number): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...body, sequence_number: sequence })}\n\n`;
}

/** The events of a response, in order, without sequence numbers. */
export function responseEvents(plan: ResponsePlan, streamChunks: number): Pending[] {
  const start = responseBody(plan, 'start');
  const item = plan.item;
  const itemId = String(item.id);
  const events: Pending[] = [
    { type: 'response.created', body: { response: start }, lead: true },
    { type: 'response.in_progress', body: { response: start }, lead: true },
  ];
  if (item.type === 'function_call') {
    const args = String(item.arguments);
    events.push({ type: 'response.output_item.added', body: { output_index: 0, item: { ...item, arguments: '', status: 'in_progress' } }, lead: true });
    for (const delta of splitIntoChunks(args, streamChunks)) {
      events.push({ type: 'response.function_call_arguments.delta', body: { item_id: itemId, output_index: 0, delta }, content: true });
    }
    events.push({ type: 'response.function_call_arguments.done', body: { item_id: itemId, name: item.name, output_index: 0, arguments: args } });
  } else {
    const text = plan.reply.content ?? '';
    const at = { item_id: itemId, output_index: 0, content_index: 0 };
    events.push({ type: 'response.output_item.added', body: { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }, lead: true });
    events.push({ type: 'response.content_part.added', body: { ...at, part: outputTextPart('') }, lead: true });
    for (const delta of splitIntoChunks(text, streamChunks)) {
      events.push({ type: 'response.output_text.delta', body: { ...at, delta, logprobs: [] }, content: true });
    }
    events.push({ type: 'response.output_text.done', body: { ...at, text, logprobs: [] } });
    events.push({ type: 'response.content_part.done', body: { ...at, part: outputTextPart(text) } });
  }
  events.push({ type: 'response.output_item.done', body: { output_index: 0, item } });
  const final = responseBody(plan, 'final');
  events.push({ type: plan.status === 'incomplete' ? 'response.incomplete' : 'response.completed', body: { response: final } });
  return events;
}

/** Sequence number of the error event `writeStream` sends after `errorAfter` content frames (its own rule). */
function errorSequence(events: readonly Pending[], errorAfter: number | undefined): number {
  if (errorAfter === undefined) return events.length;
  let written = 0;
  for (const [index, event] of events.entries()) {
    if (!event.lead && written >= errorAfter) return index;
    if (event.content) written += 1;
  }
  return events.length;
}

export async function writeResponseStream(exchange: Exchange, plan: ResponsePlan): Promise<void> {
  const { options } = exchange.state;
  const events = responseEvents(plan, options.streamChunks);
  const frames: StreamFrame[] = events.map((event, index) => ({
    data: frame(event.type, event.body, index),
    ...(event.content ? { content: true } : {}),
    ...(event.lead ? { lead: true } : {}),
  }));
  const fault = exchange.fault;
  const error = OPENAI_STREAM_ERROR.error;
  const errorFrame = frame('error', { code: 'server_error', message: error.message, param: null }, errorSequence(events, fault?.errorEventAfterChunks));
  await writeStream(exchange.response, SSE_HEADERS, frames, {
    chunkDelayMs: options.chunkDelayMs,
    cutAfterChunks: fault?.cutAfterChunks,
    errorAfterChunks: fault?.errorEventAfterChunks,
    errorFrame,
  });
}
