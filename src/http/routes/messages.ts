import type { FastifyInstance, FastifyRequest } from 'fastify';
import { renderErrorB } from '../../core/errors.ts';
import { messagesRequestSchema } from '../../dialects/anthropic/messages-request.ts';
import { parseOrThrow } from '../../dialects/validation.ts';
import { relayMessagesStream } from '../../features/inference/messages-stream.ts';
import type { MessagesHeaders, MessagesService } from '../../features/inference/messages.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { callerOf, clientAbort } from '../caller.ts';
import { takeBody, takeClientBody } from '../context.ts';
import { sendEventStream } from '../event-stream.ts';

const header = (request: FastifyRequest, name: string): string | undefined => {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
};

/** DESIGN §5: SPEC's partner-* names are the vendor's anthropic-* headers; both spellings are accepted. */
const vendorHeaders = (request: FastifyRequest): MessagesHeaders => ({
  version: header(request, 'anthropic-version') ?? header(request, 'partner-version'),
  betas: [header(request, 'anthropic-beta'), header(request, 'partner-beta')],
});

const settings = { errorShape: 'B', apiKeyHeader: true, upstreamPassthrough: true, keepsBodyBytes: true } as const;

/** POST /v1/messages and /v1/messages/count_tokens: the vendor's format, passed through (SPEC 4.2). */
export function registerMessagesRoutes(app: FastifyInstance, messages: MessagesService): void {
  app.post('/v1/messages', { config: { ...settings, name: 'messages', doc: { summary: 'Create a message (Anthropic format, SPEC 4.2)', body: messagesRequestSchema, stream: true } } }, async (request, reply) => {
    const clientBody = takeClientBody(request);
    const body = parseOrThrow(messagesRequestSchema, takeBody(request));
    const prepared = await messages.prepare(callerOf(request), body, vendorHeaders(request), 'messages', clientBody);
    reply.headers(prepared.call.resolution.headers);
    if (body.stream !== true) {
      const result = await messages.create(prepared);
      return reply.type('application/json').send(result.body);
    }
    const abort = clientAbort(reply);
    const upstream = await messages.openStream(prepared, abort.signal);
    const frames = relayMessagesStream(messages, prepared, upstream.body);
    await sendEventStream(request, reply, frames, abort, (error) => sseFrame(JSON.stringify(renderErrorB(error, request.id)), 'error'));
    return reply;
  });

  app.post('/v1/messages/count_tokens', { config: { ...settings, name: 'messages.count_tokens', doc: { summary: 'Count the input tokens of a message request', body: messagesRequestSchema } } }, async (request, reply) => {
    const clientBody = takeClientBody(request);
    const body = parseOrThrow(messagesRequestSchema, takeBody(request));
    const prepared = await messages.prepare(callerOf(request), body, vendorHeaders(request), 'messages.count_tokens', clientBody);
    reply.headers(prepared.call.resolution.headers);
    return reply.type('application/json').send(await messages.countTokens(prepared));
  });
}
