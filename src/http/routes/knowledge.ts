import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseOrThrow } from '../../dialects/validation.ts';
import { addedDocumentView, databaseView } from '../../features/knowledge/knowledge.ts';
import type { KnowledgeService } from '../../features/knowledge/knowledge-service.ts';
import { callerOf, walletFromQuery } from '../caller.ts';
import { deletedResponse } from '../route-doc.ts';

/** Longest document text accepted in one request (characters); about 1,250 chunks of 800. */
const MAX_TEXT_CHARS = 1_000_000;

/** A base's or document's title; the management API's doors (management/knowledge.ts) take the same fields. */
export const knowledgeTitle = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
export const documentText = z.string().min(1, 'must not be empty').max(MAX_TEXT_CHARS, `must be at most ${MAX_TEXT_CHARS} characters`);
export const documentFormat = z.enum(['text', 'markdown']).default('text');
const title = knowledgeTitle;
const createBody = z.object({ title });
const addBody = z.object({
  databaseId: z.string().min(1, 'must not be empty'),
  title,
  text: documentText,
  format: documentFormat,
  useWalletBalance: z.boolean().optional(),
});
const deleteBody = z.object({ id: z.string().min(1, 'must not be empty') });

/** Knowledge bases (the `database` of an assistant): create, add a document, list, delete. Owner only; errors in shape A. */
export function registerKnowledgeRoutes(app: FastifyInstance, knowledge: KnowledgeService): void {
  app.post('/v1/database/create', { config: { name: 'database.create', doc: { summary: 'Create a knowledge base', body: createBody } } }, async (request) => {
    const body = parseOrThrow(createBody, request.body);
    return databaseView(await knowledge.create(callerOf(request), body.title));
  });

  app.post('/v1/database/add', { config: { name: 'database.add', doc: { summary: 'Add a document to a knowledge base (embedding charged)', body: addBody } } }, async (request) => {
    const body = parseOrThrow(addBody, request.body);
    const added = await knowledge.add(callerOf(request), {
      databaseId: body.databaseId,
      title: body.title,
      text: body.text,
      format: body.format,
      useWalletBalance: body.useWalletBalance === true || walletFromQuery(request),
    });
    return addedDocumentView(added);
  });

  app.get('/v1/database/list', { config: { name: 'database.list', doc: { summary: 'List your knowledge bases', list: true } } }, async (request) => {
    const bases = await knowledge.list(callerOf(request));
    return { object: 'list', data: bases.map(databaseView) };
  });

  app.post('/v1/database/delete', { config: { name: 'database.delete', doc: { summary: 'Delete a knowledge base', body: deleteBody, response: deletedResponse } } }, async (request) => {
    const { id } = parseOrThrow(deleteBody, request.body);
    await knowledge.delete(callerOf(request), id);
    return { id, object: 'database', deleted: true };
  });
}
