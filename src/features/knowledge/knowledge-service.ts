import { GatewayError, invalidParam } from '../../core/errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { newId } from '../../lib/ids.ts';
import type { Money } from '../../lib/money.ts';
import { cosine, type Embedder } from '../assistants/embedder.ts';
import type { BalanceBook } from '../billing/balance-book.ts';
import { emptyUsage, priceUsage } from '../billing/pricing.ts';
import type { Model } from '../catalog/model.ts';
import { payerOf, type Caller } from '../inference/model-call.ts';
import { chunkDocument } from './chunking.ts';
import type { AddDocumentInput, AddedDocument, Excerpt, IdPage, KnowledgeBase, KnowledgeBaseSummary, KnowledgeChunk, KnowledgeDocumentSummary, KnowledgeRepository } from './knowledge.ts';

/** Texts per embeddings request when a document is added (well under the vendors' per-request limits). */
const EMBED_BATCH = 64;

export const knowledgeBaseNotFound = (param: string): GatewayError => new GatewayError('not_found', 'Knowledge base not found', { param });

const noEmbeddingModel = (): GatewayError =>
  new GatewayError('unavailable', 'Knowledge bases need an embedding model and none is configured (TOLLGATE_EMBEDDING_MODEL).');

/** What one retrieval found and what its query embedding cost (the caller decides who pays). */
export interface Retrieval {
  excerpts: Excerpt[];
  embeddingTokens: number;
  cost: Money;
}

/**
 * Knowledge bases of SPEC's assistant `database`: create, add documents (chunked, embedded and billed to the caller's
 * paying account as one ledger entry), list, delete, and retrieval of the chunks closest to a query. Everything is the
 * owner's only: another user's key finds no base (404), so it cannot even learn that one exists.
 */
export class KnowledgeService {
  constructor(
    private readonly repository: KnowledgeRepository,
    private readonly embedder: Embedder,
    private readonly book: BalanceBook,
    private readonly clock: Clock,
  ) {}

  async create(caller: Caller, title: string): Promise<KnowledgeBaseSummary> {
    const base: KnowledgeBase = { id: newId('knowledgeBase'), ownerId: caller.key.userId, title, createdAt: this.clock.now() };
    await this.repository.createBase(base);
    return { ...base, documents: 0, chunks: 0, characters: 0 };
  }

  /** All the caller's bases (SPEC's list), or one page of them, newest first. */
  list(caller: Caller, page?: IdPage): Promise<KnowledgeBaseSummary[]> {
    return this.repository.listBases(caller.key.userId, page);
  }

  /** One of the caller's bases with its documents (titles and sizes, never their texts); another user's is not found. */
  async describe(caller: Caller, id: string): Promise<{ base: KnowledgeBaseSummary; documents: KnowledgeDocumentSummary[] }> {
    const base = await this.owned(caller.key.userId, id);
    if (!base) throw knowledgeBaseNotFound('id');
    const documents = await this.repository.documents(id);
    const sum = (field: 'chunks' | 'characters') => documents.reduce((total, document) => total + document[field], 0);
    return { base: { ...base, documents: documents.length, chunks: sum('chunks'), characters: sum('characters') }, documents };
  }

  async delete(caller: Caller, id: string): Promise<void> {
    if (!(await this.repository.deleteBase(caller.key.userId, id))) throw knowledgeBaseNotFound('id');
  }

  /** The base if `ownerId` owns it. */
  async owned(ownerId: string, id: string): Promise<KnowledgeBase | undefined> {
    const base = await this.repository.getBase(id);
    return base && base.ownerId === ownerId ? base : undefined;
  }

  /**
   * Chunks the text, embeds every chunk and stores the document; the embedding tokens are priced once at the embedding
   * model's price and charged after the document is stored (nothing is charged when embedding or storing fails).
   */
  async add(caller: Caller, input: AddDocumentInput): Promise<AddedDocument> {
    if (!(await this.owned(caller.key.userId, input.databaseId))) throw knowledgeBaseNotFound('databaseId');
    if (!this.embedder.model()) throw noEmbeddingModel();
    const payer = payerOf(caller.key, input.useWalletBalance);
    if (!(await this.book.isPositive(payer))) {
      throw new GatewayError('insufficient_balance', payer.type === 'org' ? 'Organization balance is too low to use API' : 'Balance is too low to use API');
    }
    const texts = chunkDocument(input.text, input.format);
    if (texts.length === 0) throw invalidParam('text', 'must contain text to index (Markdown headings alone are not indexed)');
    const { vectors, tokens, model } = await this.embedAll(texts, caller.requestId);
    const cost = priceUsage(model, { ...emptyUsage(), inputTokens: tokens }).total;
    const document = { id: newId('knowledgeDocument'), baseId: input.databaseId, title: input.title, text: input.text, createdAt: this.clock.now() };
    const chunks: KnowledgeChunk[] = texts.map((text, seq) => ({ id: newId('knowledgeChunk'), baseId: document.baseId, documentId: document.id, seq, text, embedding: vectors[seq]! }));
    if (!(await this.repository.addDocument(caller.key.userId, document, chunks))) throw knowledgeBaseNotFound('databaseId');
    // The request log's row names the account that paid, the embedding model and the tokens embedded (its cost comes from the ledger entry).
    caller.trace?.chargedFor(model, payer);
    caller.trace?.used({ ...emptyUsage(), inputTokens: tokens });
    if (cost > 0n) {
      this.book.record({ account: payer, amount: -cost, kind: 'charge', requestId: caller.requestId, keyId: caller.key.id, model: model.id, description: `knowledge base ${document.baseId}: document ${document.id}` });
    }
    return { document, chunks: chunks.length, embeddingTokens: tokens, cost };
  }

  private async embedAll(texts: readonly string[], requestId: string): Promise<{ vectors: number[][]; tokens: number; model: Model }> {
    const vectors: number[][] = [];
    let tokens = 0;
    let model: Model | undefined;
    for (let start = 0; start < texts.length; start += EMBED_BATCH) {
      const batch = texts.slice(start, start + EMBED_BATCH);
      const result = await this.embedder.embed(batch, requestId);
      if (!result) throw noEmbeddingModel();
      if (result.vectors.length !== batch.length) throw new GatewayError('upstream_error', `The embedding model returned ${result.vectors.length} vectors for ${batch.length} texts.`);
      vectors.push(...result.vectors);
      tokens += result.usage.inputTokens;
      model = result.model;
    }
    return { vectors, tokens, model: model! };
  }

  /**
   * The `limit` chunks of a base most similar to the query (cosine of embeddings, highest first; ties keep document
   * order). There is no similarity floor: the model is given the best the base has and judges its relevance itself.
   * Returns undefined when no embedding model is configured.
   */
  async retrieve(baseId: string, query: string, limit: number, requestId: string, signal?: AbortSignal): Promise<Retrieval | undefined> {
    if (!query.trim()) return { excerpts: [], embeddingTokens: 0, cost: 0n };
    const embedded = await this.embedder.embed([query], requestId, signal);
    const vector = embedded?.vectors[0];
    if (!embedded || !vector) return undefined;
    const scored = (await this.repository.chunksOf(baseId)).map((chunk) => ({ chunk, score: cosine(vector, chunk.embedding) }));
    scored.sort((a, b) => b.score - a.score);
    return {
      excerpts: scored.slice(0, limit).map(({ chunk, score }) => ({ documentTitle: chunk.documentTitle, text: chunk.text, score })),
      embeddingTokens: embedded.usage.inputTokens,
      cost: embedded.cost.total,
    };
  }
}
