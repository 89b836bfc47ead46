import type { FastifyInstance } from 'fastify';
import { renderErrorA } from '../../core/errors.ts';
import { chatRequestSchema, passThroughBody, toChatRequest } from '../../dialects/openai/chat-request.ts';
import { parseOrThrow } from '../../dialects/validation.ts';
import type { ChatCompletionsService } from '../../features/inference/chat-completions.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { callerOf, clientAbort, walletFromQuery } from '../caller.ts';
import { takeBody, takeClientBody } from '../context.ts';
import { sendEventStream } from '../event-stream.ts';

/** POST /v1/chat/completions (OpenAI format), stream and not. */
export function registerChatCompletionsRoute(app: FastifyInstance, completions: ChatCompletionsService): void {
  app.post('/v1/chat/completions', { config: { name: 'chat.completions', upstreamPassthrough: true, keepsBodyBytes: true, doc: { summary: 'Create a chat completion (OpenAI format)', body: chatRequestSchema, stream: true } } }, async (request, reply) => {
    const clientBody = takeClientBody(request);
    const { request: chat, useWalletBalance } = toChatRequest(parseOrThrow(chatRequestSchema, takeBody(request)));
    const call = await completions.prepare(callerOf(request), chat, useWalletBalance || walletFromQuery(request));
    reply.headers(call.resolution.headers);
    // A non-stream call runs to its end even if the client leaves: the vendor bills it, so it is charged (no abort wiring).
    const bytes = passThroughBody(clientBody, chat);
    if (!chat.stream) return reply.type('application/json; charset=utf-8').send(await completions.completeText(call, chat, bytes));
    const abort = clientAbort(reply);
    const stream = await completions.openStream(call, chat, abort.signal, bytes);
    await sendEventStream(request, reply, completions.relay(call, chat, stream, bytes), abort, (error) => sseFrame(JSON.stringify(renderErrorA(error))));
    return reply;
  });
}
