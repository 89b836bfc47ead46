import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../../core/errors.ts';
import { parseOrThrow } from '../../../dialects/validation.ts';
import type { AddedDocument, KnowledgeBaseSummary, KnowledgeDocumentSummary } from '../../../features/knowledge/knowledge.ts';
import type { KnowledgeService } from '../../../features/knowledge/knowledge-service.ts';
import { formatMoney } from '../../../lib/money.ts';
import { decodeIdCursor, pageOf } from '../../../storage/id-cursor.ts';
import { documentFormat, documentText, knowledgeTitle } from '../knowledge.ts';
import { iso, pageQuery } from './actor.ts';
import { principalCaller, spendingCaller } from './principal-caller.ts';

const baseBody = z.strictObject({ title: knowledgeTitle });
const documentBody = z.strictObject({
  title: knowledgeTitle,
  text: documentText,
  format: documentFormat,
  /** With a management key bound to an org: charge the key owner's own balance instead (as SPEC's endpoints take it). */
  useWalletBalance: z.boolean().optional(),
});
const baseParams = z.object({ id: z.string().min(1).max(200) });

const baseView = (base: KnowledgeBaseSummary) => ({
  id: base.id,
  object: 'knowledge_base' as const,
  title: base.title,
  documents: base.documents,
  chunks: base.chunks,
  characters: base.characters,
  createdAt: iso(base.createdAt),
});

const documentView = (document: KnowledgeDocumentSummary) => ({
  id: document.id,
  object: 'knowledge_document' as const,
  knowledgeBaseId: document.baseId,
  title: document.title,
  characters: document.characters,
  chunks: document.chunks,
  createdAt: iso(document.createdAt),
});

/** The document just added, with what embedding it cost: the amount of its ledger entry (decimal text). */
const addedView = (added: AddedDocument) => ({
  ...documentView({ ...added.document, characters: [...added.document.text].length, chunks: added.chunks }),
  embeddingTokens: added.embeddingTokens,
  cost: formatMoney(added.cost),
});

/**
 * The service names the base `databaseId`, as SPEC's /v1/database/add body does; this door takes it as the path's `id`, so
 * an error about it names `id`, the field the caller sent.
 */
async function namingPathId<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof GatewayError && error.param === 'databaseId') throw new GatewayError(error.code, error.message, { param: 'id', codeA: error.codeA, cause: error });
    throw error;
  }
}

/**
 * GET/POST /api/v1/knowledge, GET/DELETE /api/v1/knowledge/:id, GET/POST /api/v1/knowledge/:id/documents: the signed-in user's
 * knowledge bases — the same service calls as SPEC's /v1/database/* (routes/knowledge.ts), scoped to the same owner.
 */
export function registerKnowledgeManagementRoutes(app: FastifyInstance, knowledge: KnowledgeService): void {
  app.get('/api/v1/knowledge', { config: { auth: 'user', name: 'knowledge.list', doc: { summary: 'List your knowledge bases', query: pageQuery, list: true } } }, async (request) => {
    const query = parseOrThrow(pageQuery, request.query);
    const rows = await knowledge.list(principalCaller(request), { limit: query.limit + 1, after: decodeIdCursor(query.cursor) });
    const page = pageOf(rows, query.limit);
    return { object: 'list', data: page.items.map(baseView), next_cursor: page.nextCursor };
  });

  app.post('/api/v1/knowledge', { config: { auth: 'user', name: 'knowledge.create', doc: { summary: 'Create a knowledge base', body: baseBody } } }, async (request) => {
    const body = parseOrThrow(baseBody, request.body ?? {});
    return baseView(await knowledge.create(principalCaller(request), body.title));
  });

  app.get('/api/v1/knowledge/:id', { config: { auth: 'user', name: 'knowledge.get', doc: { summary: 'One of your knowledge bases', params: baseParams } } }, async (request) => {
    const params = parseOrThrow(baseParams, request.params);
    return baseView((await knowledge.describe(principalCaller(request), params.id)).base);
  });

  // Every document at once (titles and sizes, no texts): a base holds few enough documents for one page.
  app.get('/api/v1/knowledge/:id/documents', { config: { auth: 'user', name: 'knowledge.documents', doc: { summary: 'The documents of a knowledge base, oldest first', params: baseParams, list: true } } }, async (request) => {
    const params = parseOrThrow(baseParams, request.params);
    const { documents } = await knowledge.describe(principalCaller(request), params.id);
    return { object: 'list', data: documents.map(documentView), next_cursor: null };
  });

  app.post(
    '/api/v1/knowledge/:id/documents',
    { config: { auth: 'user', name: 'knowledge.documents.add', doc: { summary: 'Add a document to a knowledge base (its embedding is charged, as SPEC\'s /v1/database/add)', params: baseParams, body: documentBody } } },
    async (request) => {
      const params = parseOrThrow(baseParams, request.params);
      const body = parseOrThrow(documentBody, request.body ?? {});
      const added = await namingPathId(knowledge.add(spendingCaller(request), { databaseId: params.id, title: body.title, text: body.text, format: body.format, useWalletBalance: body.useWalletBalance === true }));
      return addedView(added);
    },
  );

  app.delete('/api/v1/knowledge/:id', { config: { auth: 'user', name: 'knowledge.delete', doc: { summary: 'Delete a knowledge base with its documents', params: baseParams } } }, async (request) => {
    const params = parseOrThrow(baseParams, request.params);
    await knowledge.delete(principalCaller(request), params.id);
    return { id: params.id, object: 'knowledge_base', deleted: true };
  });
}
