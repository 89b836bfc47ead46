import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError, invalidParam } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import { createAssistantSchema, updateAssistantSchema } from '../../../features/assistants/assistant.ts';
import type { AssistantChatService } from '../../../features/assistants/assistant-chat.ts';
import { assistantView, catalogCardView, listItemView } from '../../../features/assistants/assistant-views.ts';
import type { AssistantPage, AssistantsService, Viewer } from '../../../features/assistants/assistants-service.ts';
import type { ModelLookup } from '../../../features/catalog/retirement.ts';
import { formatMoney } from '../../../lib/money.ts';
import type { RateLimiter } from '../../../storage/rate-limiter.ts';
import { deletedResponse } from '../../route-doc.ts';
import { answerChat, chatSchema, searchCatalog, searchQuery } from '../assistants.ts';
import { pageQuery } from './actor.ts';
import { principalCaller, spendingCaller } from './principal-caller.ts';

const id = z.string().min(1).max(200);
const assistantParams = z.object({ id });
const mentionParams = z.object({ mention: z.string().min(1).max(64) });
const listQuery = pageQuery.extend({ query: z.string().max(200).default('') });
/** Creation is free: SPEC's `useWalletBalance` has nothing to choose here. */
const createBody = createAssistantSchema.omit({ useWalletBalance: true });
const patchBody = updateAssistantSchema.omit({ id: true });
/** SPEC 4.3's body without the code (the path names the assistant) and the wallet switch (the user's own balance pays). */
const chatBody = chatSchema.omit({ assistantCode: true, useWalletBalance: true });

/** Searches a signed-out visitor may make per minute from one address: each may embed its query with a paid model. */
const PUBLIC_SEARCHES_PER_MINUTE = 60;

/** List pages run by offset (the owner's list is ordered newest first); the cursor carries the next offset, opaque to clients. */
const encodeOffset = (offset: number): string => Buffer.from(`offset:${offset}`, 'utf8').toString('base64url');
function decodeOffset(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^offset:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw invalidParam('cursor', 'is not a cursor this list gave');
  return Number(match[1]);
}

export interface AssistantManagementServices {
  assistants: AssistantsService;
  assistantChat: AssistantChatService;
  models: ModelLookup;
  limiter: RateLimiter;
}

/** The page's card: SPEC 2.6's public card, and whether the viewer liked it (the page's Like button). */
const pageCard = (page: AssistantPage) => ({ ...catalogCardView(page.assistant, page.owner, page.installed), isLiked: page.liked });

/**
 * The console's doors onto the assistants feature (DESIGN §11 `/console/assistants`, `/a/:mention`, the storefront search):
 * the same service calls as SPEC 4.3–4.6. A signed-in user acts as with a personal key (their console key): their assistants
 * are theirs (an organisation's only when `access.orgId` says so), their chats are charged to their own balance; a
 * management key acts as itself, as its owner's inference key would.
 */
export function registerAssistantManagementRoutes(app: FastifyInstance, services: AssistantManagementServices): void {
  const { assistants } = services;
  const model = (modelId: string) => services.models.get(modelId);
  const viewerOf = (request: FastifyRequest): Viewer => ({ userId: request.principal?.user.id ?? null, orgId: null, requestId: request.id });

  app.get('/api/v1/assistants', { config: { auth: 'user', name: 'assistants.list', doc: { summary: 'List your assistants, newest first (query filters title or code)', query: listQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(listQuery, request.query);
    const offset = decodeOffset(query.cursor);
    const { total, items } = await assistants.list(principalCaller(request), query.query, query.limit, offset);
    const next = offset + items.length;
    return { object: 'list', total, data: items.map((item) => listItemView(item, model(item.modelId))), next_cursor: next < total && items.length > 0 ? encodeOffset(next) : null };
  });

  app.post('/api/v1/assistants', { config: { auth: 'user', name: 'assistants.create', doc: { summary: 'Create an assistant (SPEC 2.6 fields)', body: createBody } } }, async (request) => {
    const assistant = await assistants.create(principalCaller(request), parseOrThrow(createBody, request.body));
    return assistantView(assistant, model(assistant.modelId));
  });

  // Before `/:id`, though Fastify prefers static segments anyway: `search` is never an assistant id.
  app.get('/api/v1/assistants/search', { config: { auth: 'optionalUser', name: 'assistants.search', doc: { summary: 'Search the assistant catalog (SPEC 4.6), signed in or not', query: searchQuery } } }, async (request, reply) => {
    const query = parseOrThrow(searchQuery, request.query);
    if (!request.principal) {
      const decision = await services.limiter.take(`catalog-search:${request.ip}`, PUBLIC_SEARCHES_PER_MINUTE);
      if (!decision.allowed) {
        reply.header('retry-after', String(Math.ceil(decision.retryAfterMs / 1000)));
        throw new GatewayError('rate_limited', 'Too many catalog searches from this address; sign in or try again in a minute.', { codeA: 'rate_limit_exceeded' });
      }
    }
    return searchCatalog(assistants, viewerOf(request), query);
  });

  /** The card of the page `/a/:mention` as the viewer sees it now. */
  const cardNow = async (request: FastifyRequest, mention: string) => pageCard(await assistants.page(viewerOf(request), mention));
  app.get('/api/v1/assistants/by-mention/:mention', { config: { auth: 'optionalUser', name: 'assistants.page', doc: { summary: "An assistant's public card by its code (the page /a/:mention)", params: mentionParams } } }, async (request) =>
    cardNow(request, parseOrThrow(mentionParams, request.params).mention),
  );

  // The console's doors onto SPEC 4.6's like and install (/v1/assistant/like, /v1/assistant/install): the same service calls,
  // as the signed-in user (their console key); each answers the assistant's card as it is now.
  app.post('/api/v1/assistants/:id/like', { config: { auth: 'user', name: 'assistants.like', doc: { summary: 'Like an assistant of the catalog (once per user)', params: assistantParams } } }, async (request) => {
    const params = parseOrThrow(assistantParams, request.params);
    const assistant = await assistants.like(principalCaller(request), params.id);
    return cardNow(request, assistant.mention);
  });

  app.post('/api/v1/assistants/:id/install', { config: { auth: 'user', name: 'assistants.install', doc: { summary: 'Install an assistant (once per user; a paid one is charged to your balance)', params: assistantParams } } }, async (request) => {
    const params = parseOrThrow(assistantParams, request.params);
    const { assistant, charged } = await assistants.install(spendingCaller(request), params.id, false);
    return { ...(await cardNow(request, assistant.mention)), charged: formatMoney(charged) };
  });

  app.get('/api/v1/assistants/:id', { config: { auth: 'user', name: 'assistants.get', doc: { summary: 'One assistant you may edit, with every field', params: assistantParams } } }, async (request) => {
    const params = parseOrThrow(assistantParams, request.params);
    const assistant = await assistants.editable(principalCaller(request), params.id);
    return assistantView(assistant, model(assistant.modelId));
  });

  app.patch('/api/v1/assistants/:id', { config: { auth: 'user', name: 'assistants.update', doc: { summary: 'Change an assistant (SPEC 4.4: only sent fields change)', params: assistantParams, body: patchBody } } }, async (request) => {
    const params = parseOrThrow(assistantParams, request.params);
    const body = parseOrThrow(patchBody, request.body ?? {});
    const assistant = await assistants.update(principalCaller(request), { ...body, id: params.id });
    return assistantView(assistant, model(assistant.modelId));
  });

  app.delete('/api/v1/assistants/:id', { config: { auth: 'user', name: 'assistants.delete', doc: { summary: 'Delete an assistant', params: assistantParams, response: deletedResponse } } }, async (request) => {
    const params = parseOrThrow(assistantParams, request.params);
    const assistant = await assistants.delete(principalCaller(request), params.id);
    return { id: assistant.id, object: 'assistant', deleted: true as const };
  });

  app.post('/api/v1/assistants/:id/chat', { config: { auth: 'user', name: 'assistants.chat', doc: { summary: 'Chat with an assistant, charged to your balance (SPEC 4.3 answer and stream)', params: assistantParams, body: chatBody, stream: true } } }, async (request, reply) => {
    const params = parseOrThrow(assistantParams, request.params);
    const body = parseOrThrow(chatBody, request.body);
    const caller = spendingCaller(request);
    const assistant = await assistants.visible(caller, params.id);
    const turn = await services.assistantChat.prepare(caller, {
      chatId: body.chatId,
      assistantCode: assistant.mention,
      message: body.message,
      maxContext: body.maxContext,
      images: body.images,
      useWalletBalance: false,
    });
    return answerChat(request, reply, services.assistantChat, turn, body.stream);
  });
}
