// Streaming chat completions (PROTOCOLS 2.2): `data: <chunk>` frames, then `data: [DONE]`.
// Per choice: a role chunk, for a tool call a header chunk (id, type, name, empty arguments), the content or
// arguments split into `streamChunks` pieces (the "content chunks" faults count), then a chunk with
// finish_reason. With include_usage every chunk carries `usage: null` and a last chunk has `choices: []`
// and the full usage.

import type { Exchange, StreamFrame } from './exchange.ts';
import { SSE_HEADERS, writeStream } from './exchange.ts';
import type { JsonRecord } from './json-narrow.ts';
import { SYSTEM_FINGERPRINT, type ChatChoiceReply, type ChatCompletionPlan } from './openai-chat-reply.ts';
import { splitIntoChunks } from './text.ts';
import { OPENAI_STREAM_ERROR } from './vendor-errors.ts';

const DONE_FRAME = 'data: [DONE]\n\n';
const ERROR_FRAME = `data: ${JSON.stringify(OPENAI_STREAM_ERROR)}\n\n`;

export async function writeChatStream(exchange: Exchange, plan: ChatCompletionPlan, includeUsage: boolean): Promise<void> {
  const { options } = exchange.state;
  const head = `{"id":${JSON.stringify(plan.id)},"object":"chat.completion.chunk","created":${plan.created},"model":${JSON.stringify(plan.model)},"service_tier":"default","system_fingerprint":"${SYSTEM_FINGERPRINT}","choices":[`;
  const tail = includeUsage ? '],"usage":null}\n\n' : ']}\n\n';
  const frame = (choice: JsonRecord): string => `data: ${head}${JSON.stringify(choice)}${tail}`;
  const frames: StreamFrame[] = [];
  plan.choices.forEach((choice, index) => choiceFrames(frames, choice, index, options.streamChunks, frame));
  if (includeUsage) frames.push({ data: `data: ${head}],"usage":${JSON.stringify(plan.usage)}}\n\n` });
  frames.push({ data: DONE_FRAME });
  const fault = exchange.fault;
  await writeStream(exchange.response, SSE_HEADERS, frames, {
    chunkDelayMs: options.chunkDelayMs,
    cutAfterChunks: fault?.cutAfterChunks,
    errorAfterChunks: fault?.errorEventAfterChunks,
    errorFrame: ERROR_FRAME,
  });
}

function choiceFrames(
  frames: StreamFrame[],
  choice: ChatChoiceReply,
  index: number,
  streamChunks: number,
  frame: (choice: JsonRecord) => string,
): void {
  const lead = index === 0;
  const delta = (body: JsonRecord, finishReason: string | null = null): string =>
    frame({ index, delta: body, logprobs: null, finish_reason: finishReason });
  frames.push({ data: delta({ role: 'assistant', content: '', refusal: null }), lead });
  const call = choice.toolCall;
  if (call !== undefined) {
    frames.push({ data: delta({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }), lead });
    for (const piece of splitIntoChunks(call.arguments, streamChunks)) {
      frames.push({ data: delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }), content: true });
    }
  } else {
    for (const piece of splitIntoChunks(choice.content ?? '', streamChunks)) {
      frames.push({ data: delta({ content: piece }), content: true });
    }
  }
  frames.push({ data: delta({}, choice.finishReason) });
}
