import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import { createAssistantSchema, updateAssistantSchema } from '../../features/assistants/assistant.ts';
import type { AssistantChatService, ChatTurn } from '../../features/assistants/assistant-chat.ts';
import { streamTurn } from '../../features/assistants/assistant-chat-stream.ts';
import { assistantView, catalogCardView, listItemView } from '../../features/assistants/assistant-views.ts';
import { viewerOf, type AssistantsService, type Viewer } from '../../features/assistants/assistants-service.ts';
import type { ModelLookup } from '../../features/catalog/retirement.ts';
import { formatMoney } from '../../lib/money.ts';
import { sseFrame } from '../../lib/sse-writer.ts';
import { renderErrorA } from '../../core/errors.ts';
import { callerOf, walletFromQuery } from '../caller.ts';
import { sendEventStream } from '../event-stream.ts';
import { pushed } from '../../lib/push-stream.ts';
import { toCatalogueError } from '../plugins/errors.ts';

const pageNumber = (max: number, fallback: number) =>
  z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(1, `must be between 1 and ${max}`).max(max, `must be between 1 and ${max}`).default(fallback);
const offsetNumber = z.coerce.number({ message: 'must be a number' }).int('must be an integer').min(0, 'must be 0 or more').default(0);

const listQuery = z.object({ query: z.string().max(200).default(''), limit: pageNumber(100, 25), offset: offsetNumber });
/** SPEC 4.6's query; the management API's public search (/api/v1/assistants/search) takes the same. */
export const searchQuery = z.object({ query: z.string().max(200).default(''), sortBy: z.enum(['popular', 'newest']).default('popular'), limit: pageNumber(30, 25), offset: offsetNumber });
const idBody = z.object({ id: z.string().min(1), useWalletBalance: z.boolean().optional() });

/** SPEC 4.3: 24 to 36 characters, made by the client. */
export const chatSchema = z.object({
  chatId: z.string().min(24, 'must be 24 to 36 characters').max(36, 'must be 24 to 36 characters'),
  assistantCode: z.string().min(1, 'must not be empty'),
  message: z.string().min(1, 'must not be empty').max(100_000),
  maxContext: z.number().int().min(0).max(200).default(0),
  images: z.array(z.string().min(1)).max(8).default([]),
  stream: z.boolean().default(false),
  useWalletBalance: z.boolean().optional(),
});

/** The assistants feature as its routes use it: the assistants, their chat, and the catalog their views show models from. */
export interface AssistantRouteServices {
  assistants: AssistantsService;
  assistantChat: AssistantChatService;
  models: ModelLookup;
}

/** Assistants (SPEC 4.3–4.6, 4.10 create) plus likes and installs of the catalog. */
export function registerAssistantRoutes(app: FastifyInstance, services: AssistantRouteServices): void {
  const model = (id: string) => services.models.get(id);

  app.post('/v1/assistant/create', { config: { name: 'assistant.create', doc: { summary: 'Create an assistant', body: createAssistantSchema } } }, async (request) => {
    const assistant = await services.assistants.create(callerOf(request), parseOrThrow(createAssistantSchema, request.body));
    return assistantView(assistant, model(assistant.modelId));
  });

  app.post('/v1/assistant/update', { config: { name: 'assistant.update', doc: { summary: 'Update an assistant (SPEC 4.4)', body: updateAssistantSchema } } }, async (request) => {
    const assistant = await services.assistants.update(callerOf(request), parseOrThrow(updateAssistantSchema, request.body));
    return assistantView(assistant, model(assistant.modelId));
  });

  app.get('/v1/assistant/list', { config: { name: 'assistant.list', doc: { summary: 'List your assistants (SPEC 4.5)', query: listQuery } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const { total, items } = await services.assistants.list(callerOf(request), query.query, query.limit, query.offset);
    return { object: 'list', total, limit: query.limit, offset: query.offset, data: items.map((item) => listItemView(item, model(item.modelId))) };
  });

  app.get('/v1/assistant/search', { config: { name: 'assistant.search', doc: { summary: 'Search the public assistant catalog (SPEC 4.6)', query: searchQuery } } }, async (request) =>
    searchCatalog(services.assistants, viewerOf(callerOf(request)), parseOrThrow(searchQuery, request.query)),
  );

  app.post('/v1/assistant/like', { config: { name: 'assistant.like', doc: { summary: 'Like a catalog assistant', body: idBody } } }, async (request) => {
    const { id } = parseOrThrow(idBody, request.body);
    const assistant = await services.assistants.like(callerOf(request), id);
    return { ok: true, id: assistant.id, likes: assistant.likes };
  });

  app.post('/v1/assistant/install', { config: { name: 'assistant.install', doc: { summary: 'Install a catalog assistant (charged at its price)', body: idBody } } }, async (request) => {
    const body = parseOrThrow(idBody, request.body);
    const { assistant, charged } = await services.assistants.install(callerOf(request), body.id, body.useWalletBalance === true || walletFromQuery(request));
    return { ok: true, id: assistant.id, isInstalled: true, charged: formatMoney(charged) };
  });

  app.post('/v1/assistant/chat', { config: { name: 'assistant.chat', doc: { summary: 'Chat with an assistant (SPEC 4.3)', body: chatSchema, stream: true } } }, async (request, reply) => {
    const body = parseOrThrow(chatSchema, request.body);
    const turn = await services.assistantChat.prepare(callerOf(request), {
      chatId: body.chatId,
      assistantCode: body.assistantCode,
      message: body.message,
      maxContext: body.maxContext,
      images: body.images,
      useWalletBalance: body.useWalletBalance === true || walletFromQuery(request),
    });
    return answerChat(request, reply, services.assistantChat, turn, body.stream);
  });
}

/** SPEC 4.6's answer, for a key's caller or for anyone (the storefront). */
export async function searchCatalog(assistants: AssistantsService, viewer: Viewer, query: z.output<typeof searchQuery>): Promise<Record<string, unknown>> {
  const result = await assistants.search(viewer, query);
  return {
    object: 'list',
    total: result.total,
    limit: query.limit,
    offset: query.offset,
    data: result.items.map((item) => catalogCardView(item, { id: item.ownerId, name: result.owners.get(item.ownerId) ?? '' }, result.installed.has(item.id))),
  };
}

/**
 * Runs a prepared chat turn and answers as SPEC 4.3 does: the response object of SPEC 2.5, or with `stream` the experimental
 * stream — `{chatId, assistantCode, delta}` frames as the reply is written, then the whole response object, then [DONE].
 */
export async function answerChat(request: FastifyRequest, reply: FastifyReply, chat: AssistantChatService, turn: ChatTurn, stream: boolean): Promise<unknown> {
  reply.headers(turn.call.resolution.headers);
  if (!stream) return chat.run(turn);
  const { chatId } = turn.input;
  const mention = turn.assistant.mention;
  const frames = (async function* () {
    for await (const event of streamTurn(chat, turn)) {
      if (event.type === 'delta') yield sseFrame(JSON.stringify({ chatId, assistantCode: mention, delta: event.text }));
      else if (event.type === 'response') yield sseFrame(JSON.stringify(event.response));
      else yield sseFrame(JSON.stringify(renderErrorA(toCatalogueError(event.error, false))));
    }
    yield sseFrame('[DONE]');
  })();
  await sendEventStream(request, reply, pushed(frames), turn.abort, (error) => sseFrame(JSON.stringify(renderErrorA(error))));
  return reply;
}
