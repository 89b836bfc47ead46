import type { Money } from '../../lib/money.ts';
import { toUsageNumber } from '../../lib/money.ts';
import type { DocumentFormat } from './chunking.ts';

/**
 * A knowledge base (`database` of an assistant): documents cut into chunks, each with the embedding of its text, owned by
 * one user. Only the owner sees or changes it; an assistant of that owner retrieves from it at chat time.
 */
export interface KnowledgeBase {
  id: string;
  ownerId: string;
  title: string;
  /** Unix milliseconds. */
  createdAt: number;
}

export interface KnowledgeBaseSummary extends KnowledgeBase {
  documents: number;
  chunks: number;
  /** Characters of its documents' texts as sent, summed (the size a user recognises; chunks overlap). */
  characters: number;
}

/** A document as lists show it: without its text. */
export interface KnowledgeDocumentSummary {
  id: string;
  baseId: string;
  title: string;
  /** Characters of the text as sent. */
  characters: number;
  chunks: number;
  /** Unix milliseconds. */
  createdAt: number;
}

/** One page of a newest-first list by id (ids sort by creation): `limit` rows after the id `after`. */
export interface IdPage {
  limit: number;
  after?: string | undefined;
}

export interface KnowledgeDocument {
  id: string;
  baseId: string;
  title: string;
  /** The text as sent (before normalisation and chunking). */
  text: string;
  createdAt: number;
}

export interface KnowledgeChunk {
  id: string;
  baseId: string;
  documentId: string;
  /** Order of the chunk in its document, from 0. */
  seq: number;
  text: string;
  /** Embedding of `text` by the configured embedding model (unit length for the vendors we use; ranked by cosine). */
  embedding: number[];
}

/** A chunk found for a query, with its document's title and its cosine similarity to the query (-1 to 1). */
export interface Excerpt {
  documentTitle: string;
  text: string;
  score: number;
}

export interface AddDocumentInput {
  databaseId: string;
  title: string;
  text: string;
  format: DocumentFormat;
  useWalletBalance: boolean;
}

/** What adding a document did and cost (the charge booked to the caller's paying account). */
export interface AddedDocument {
  document: KnowledgeDocument;
  chunks: number;
  embeddingTokens: number;
  cost: Money;
}

export const databaseView = (base: KnowledgeBaseSummary): Record<string, unknown> => ({
  id: base.id,
  object: 'database',
  title: base.title,
  createDate: new Date(base.createdAt).toISOString(),
  documents: base.documents,
  chunks: base.chunks,
});

export const addedDocumentView = (added: AddedDocument): Record<string, unknown> => ({
  id: added.document.id,
  object: 'database.document',
  databaseId: added.document.baseId,
  title: added.document.title,
  chunks: added.chunks,
  usage: {
    embedding_tokens: added.embeddingTokens,
    embedding_cost: toUsageNumber(added.cost),
    total_cost: toUsageNumber(added.cost),
  },
});

/** A stored chunk with its document's title, as retrieval reads it. */
export interface StoredChunk extends KnowledgeChunk {
  documentTitle: string;
}

/** Knowledge bases, their documents and chunks; storage/knowledge-repository.ts implements it. */
export interface KnowledgeRepository {
  createBase(base: KnowledgeBase): Promise<void>;
  getBase(id: string): Promise<KnowledgeBase | undefined>;
  /** The owner's bases with their document and chunk counts, newest first (by id, a page of them when `page` is given). */
  listBases(ownerId: string, page?: IdPage): Promise<KnowledgeBaseSummary[]>;
  /** A base's documents with their sizes, oldest first. */
  documents(baseId: string): Promise<KnowledgeDocumentSummary[]>;
  /** Stores a document and its chunks at once, provided the base still exists and is `ownerId`'s; false when it is not. */
  addDocument(ownerId: string, document: KnowledgeDocument, chunks: readonly KnowledgeChunk[]): Promise<boolean>;
  /** Deletes a base of `ownerId` with its documents and chunks; false when there is no such base. */
  deleteBase(ownerId: string, id: string): Promise<boolean>;
  /** Every chunk of a base, in document and chunk order. */
  chunksOf(baseId: string): Promise<StoredChunk[]>;
}
