import type { FastifyInstance, FastifyReply } from 'fastify';
import { renderErrorA } from '../../core/errors.ts';
import { responsesRequestSchema, toResponsesRequest } from '../../dialects/openai/responses-request.ts';
import { parseOrThrow } from '../../dialects/validation.ts';
import type { PreparedResponse, ResponsesService } from '../../features/responses/responses-service.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { callerOf, clientAbort, walletFromQuery } from '../caller.ts';
import { takeClientBody } from '../context.ts';
import { sendEventStream } from '../event-stream.ts';

/** A failure after the stream began, as the Responses API's `error` event. */
const errorFrame = (error: Parameters<typeof renderErrorA>[0]): string => {
  const { message, type, param, code } = renderErrorA(error).error;
  return sseFrame(JSON.stringify({ type: 'error', code: code ?? type, message, param }), 'error');
};

/** Names the hosted tools a translated call left out (a fallback may change the mode, so it is set again for the call that served). */
function skippedToolsHeader(reply: FastifyReply, prepared: PreparedResponse): void {
  if (prepared.mode === 'translated' && prepared.skippedTools.length > 0) reply.header('x-tollgate-skipped-tools', prepared.skippedTools.join(', '));
  else reply.removeHeader('x-tollgate-skipped-tools');
}

/** POST /v1/responses (stream and not) and GET /v1/responses/:id (OpenAI's Responses API; DESIGN §12). */
export function registerResponsesRoutes(app: FastifyInstance, responses: ResponsesService): void {
  app.post('/v1/responses', { config: { name: 'responses', upstreamPassthrough: true, keepsBodyBytes: true, doc: { summary: 'Create a model response (OpenAI Responses API; Claude models translated)', body: responsesRequestSchema, stream: true } } }, async (request, reply) => {
    const clientBody = takeClientBody(request);
    const { request: body, useWalletBalance } = toResponsesRequest(parseOrThrow(responsesRequestSchema, request.body));
    const prepared = await responses.prepare(callerOf(request), body, useWalletBalance || walletFromQuery(request), clientBody);
    reply.headers(prepared.call.resolution.headers);
    skippedToolsHeader(reply, prepared);
    // A non-stream call runs to its end even if the client leaves: the vendor bills it, so it is charged (no abort wiring).
    if (body.stream !== true) {
      const { served, body: answer } = await responses.complete(prepared);
      skippedToolsHeader(reply, served);
      return typeof answer === 'string' ? reply.type('application/json').send(answer) : answer;
    }
    const abort = clientAbort(reply);
    const { served, frames } = await responses.openStream(prepared, abort.signal);
    skippedToolsHeader(reply, served);
    await sendEventStream(request, reply, frames, abort, errorFrame);
    return reply;
  });

  app.get<{ Params: { id: string } }>('/v1/responses/:id', { config: { name: 'responses.get', upstreamPassthrough: true, doc: { summary: 'A stored response of your account' } } }, async (request, reply) => {
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
    const result = await responses.retrieve(callerOf(request), request.params.id, query);
    return reply.type(result.contentType).send(result.body);
  });
}
