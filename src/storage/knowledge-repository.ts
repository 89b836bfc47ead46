import { sql, type Kysely } from 'kysely';
import type { IdPage, KnowledgeBase, KnowledgeBaseSummary, KnowledgeChunk, KnowledgeDocument, KnowledgeDocumentSummary, KnowledgeRepository, StoredChunk } from '../features/knowledge/knowledge.ts';
import type { Database } from './schema.ts';

/** Rows per insert statement: 6 parameters each stays far below SQLite's and PostgreSQL's parameter limits. */
const INSERT_CHUNK = 200;

/**
 * Knowledge bases, their documents and chunks. Embeddings are JSON text on both engines and ranked in the process, so
 * retrieval behaves the same on SQLite and PostgreSQL.
 */
export class SqlKnowledgeRepository implements KnowledgeRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async createBase(base: KnowledgeBase): Promise<void> {
    await this.db.insertInto('knowledge_bases').values({ id: base.id, owner_id: base.ownerId, title: base.title, created_at: base.createdAt }).execute();
  }

  async getBase(id: string): Promise<KnowledgeBase | undefined> {
    const row = await this.db.selectFrom('knowledge_bases').selectAll().where('id', '=', id).executeTakeFirst();
    return row && { id: row.id, ownerId: row.owner_id, title: row.title, createdAt: row.created_at };
  }

  /**
   * The owner's bases with their document and chunk counts and text size, newest first. A page (the management API) is
   * ordered by id alone, which its cursor names; the whole list (SPEC's /v1/database/list) by creation time, then id.
   */
  async listBases(ownerId: string, page?: IdPage): Promise<KnowledgeBaseSummary[]> {
    let select = this.db
      .selectFrom('knowledge_bases as base')
      .select(['base.id', 'base.owner_id', 'base.title', 'base.created_at'])
      .select((eb) => [
        eb.selectFrom('knowledge_documents').select((inner) => inner.fn.countAll<string | number>().as('count')).whereRef('knowledge_documents.base_id', '=', 'base.id').as('documents'),
        eb.selectFrom('knowledge_chunks').select((inner) => inner.fn.countAll<string | number>().as('count')).whereRef('knowledge_chunks.base_id', '=', 'base.id').as('chunks'),
        eb
          .selectFrom('knowledge_documents')
          .select(sql<string | number | null>`sum(length(knowledge_documents.text))`.as('characters'))
          .whereRef('knowledge_documents.base_id', '=', 'base.id')
          .as('characters'),
      ])
      .where('base.owner_id', '=', ownerId);
    if (page) {
      if (page.after !== undefined) select = select.where('base.id', '<', page.after);
      select = select.orderBy('base.id', 'desc').limit(page.limit);
    } else {
      select = select.orderBy('base.created_at', 'desc').orderBy('base.id', 'desc');
    }
    const rows = await select.execute();
    return rows.map((row) => ({
      id: row.id,
      ownerId: row.owner_id,
      title: row.title,
      createdAt: row.created_at,
      documents: Number(row.documents ?? 0),
      chunks: Number(row.chunks ?? 0),
      characters: Number(row.characters ?? 0),
    }));
  }

  /** A base's documents with their sizes, oldest first (chunks counted through the base's index, not per document). */
  async documents(baseId: string): Promise<KnowledgeDocumentSummary[]> {
    const [rows, counts] = await Promise.all([
      this.db
        .selectFrom('knowledge_documents')
        .select(['id', 'base_id', 'title', 'created_at'])
        .select(sql<string | number>`length(text)`.as('characters'))
        .where('base_id', '=', baseId)
        .orderBy('created_at')
        .orderBy('id')
        .execute(),
      this.db
        .selectFrom('knowledge_chunks')
        .select(['document_id', (eb) => eb.fn.countAll<string | number>().as('count')])
        .where('base_id', '=', baseId)
        .groupBy('document_id')
        .execute(),
    ]);
    const chunks = new Map(counts.map((row) => [row.document_id, Number(row.count)]));
    return rows.map((row) => ({
      id: row.id,
      baseId: row.base_id,
      title: row.title,
      characters: Number(row.characters),
      chunks: chunks.get(row.id) ?? 0,
      createdAt: row.created_at,
    }));
  }

  /**
   * Stores a document and its chunks in one transaction, provided the base still exists and belongs to `ownerId`
   * (a base deleted meanwhile leaves no orphan rows). Returns false when it does not.
   */
  async addDocument(ownerId: string, document: KnowledgeDocument, chunks: readonly KnowledgeChunk[]): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const base = await trx.selectFrom('knowledge_bases').select('id').where('id', '=', document.baseId).where('owner_id', '=', ownerId).executeTakeFirst();
      if (!base) return false;
      await trx
        .insertInto('knowledge_documents')
        .values({ id: document.id, base_id: document.baseId, title: document.title, text: document.text, created_at: document.createdAt })
        .execute();
      for (let start = 0; start < chunks.length; start += INSERT_CHUNK) {
        const rows = chunks.slice(start, start + INSERT_CHUNK).map((chunk) => ({
          id: chunk.id,
          base_id: chunk.baseId,
          document_id: chunk.documentId,
          seq: chunk.seq,
          text: chunk.text,
          embedding: JSON.stringify(chunk.embedding),
        }));
        await trx.insertInto('knowledge_chunks').values(rows).execute();
      }
      return true;
    });
  }

  /** Deletes a base of `ownerId` with its documents and chunks; false when there is no such base. */
  async deleteBase(ownerId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const deleted = await trx.deleteFrom('knowledge_bases').where('id', '=', id).where('owner_id', '=', ownerId).executeTakeFirst();
      if (Number(deleted.numDeletedRows) === 0) return false;
      await trx.deleteFrom('knowledge_chunks').where('base_id', '=', id).execute();
      await trx.deleteFrom('knowledge_documents').where('base_id', '=', id).execute();
      return true;
    });
  }

  /** Every chunk of a base, in document and chunk order. */
  async chunksOf(baseId: string): Promise<StoredChunk[]> {
    const rows = await this.db
      .selectFrom('knowledge_chunks as chunk')
      .innerJoin('knowledge_documents as document', 'document.id', 'chunk.document_id')
      .select(['chunk.id', 'chunk.base_id', 'chunk.document_id', 'chunk.seq', 'chunk.text', 'chunk.embedding', 'document.title as document_title', 'document.created_at as document_created_at'])
      .where('chunk.base_id', '=', baseId)
      .orderBy('document.created_at')
      .orderBy('chunk.document_id')
      .orderBy('chunk.seq')
      .execute();
    return rows.map((row) => ({
      id: row.id,
      baseId: row.base_id,
      documentId: row.document_id,
      documentTitle: row.document_title,
      seq: row.seq,
      text: row.text,
      embedding: JSON.parse(row.embedding) as number[],
    }));
  }
}
