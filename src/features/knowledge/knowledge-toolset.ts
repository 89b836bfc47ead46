import type { Logger } from 'pino';
import type { JsonObject } from '../../core/chat-types.ts';
import type { Assistant, DatabaseLink } from '../assistants/assistant.ts';
import type { ToolContext, ToolDefinition, Toolset, ToolsetFactory } from '../assistants/tools/toolset.ts';
import type { KnowledgeBase } from './knowledge.ts';
import type { KnowledgeService, Retrieval } from './knowledge-service.ts';

/**
 * An assistant's knowledge base at chat time. Its link's `requestFrequency` decides when the base is read:
 * - `always`: for every message, the `chunks` chunks closest to the user's message are retrieved before the model is
 *   called and put into the system prompt as a "Knowledge base excerpts:" block; no tool is offered.
 * - `auto`: the model is offered the tool `search_knowledge_base({query})` and reads the base only when it calls it; the
 *   tool answers with the `chunks` chunks closest to the model's query.
 * Each retrieval embeds one text (the message or the query); its tokens and cost are added to the chat's charges, so the
 * one who chats pays them as `embedding_tokens` / `embedding_cost`. A base that no longer exists or is not the
 * assistant owner's gives the assistant no knowledge, never another user's documents.
 */

export const SEARCH_TOOL_NAME = 'search_knowledge_base';

/** Longest query embedded for the tool; a model may send more, the rest is not needed to find passages. */
const MAX_QUERY_CHARS = 4_000;

export const EXCERPTS_HEADING = 'Knowledge base excerpts:';

/** Excerpts as the model reads them: numbered, each with its document's title. */
export function formatExcerpts(retrieval: Retrieval): string | undefined {
  if (retrieval.excerpts.length === 0) return undefined;
  const blocks = retrieval.excerpts.map((excerpt, index) => `[${index + 1}] From "${excerpt.documentTitle}":\n${excerpt.text}`);
  return `${EXCERPTS_HEADING}\n\n${blocks.join('\n\n')}`;
}

function searchDefinition(base: KnowledgeBase, chunks: number): ToolDefinition {
  return {
    name: SEARCH_TOOL_NAME,
    description: `Searches the knowledge base "${base.title}" and returns the ${chunks} passage(s) most relevant to the query. Use it when the answer may be in the assistant's documents.`,
    parameters: {
      type: 'object',
      properties: { query: { type: 'string', description: 'What to look for, in words likely to appear in the documents.' } },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

export class KnowledgeToolset implements Toolset {
  readonly definitions: readonly ToolDefinition[];

  constructor(
    private readonly service: KnowledgeService,
    private readonly base: KnowledgeBase,
    private readonly link: DatabaseLink,
    private readonly logger: Logger,
  ) {
    this.definitions = link.requestFrequency === 'auto' ? [searchDefinition(base, link.chunks)] : [];
  }

  private async retrieve(query: string, context: ToolContext): Promise<Retrieval | undefined> {
    const retrieval = await this.service.retrieve(this.base.id, query, this.link.chunks, context.caller.requestId, context.signal);
    if (retrieval && retrieval.embeddingTokens > 0) context.charges.addEmbedding(retrieval.embeddingTokens, retrieval.cost);
    return retrieval;
  }

  async systemContext(context: ToolContext): Promise<string | undefined> {
    if (this.link.requestFrequency !== 'always') return undefined;
    try {
      const retrieval = await this.retrieve(context.message, context);
      return retrieval && formatExcerpts(retrieval);
    } catch (error) {
      // The assistant still answers, without excerpts, rather than failing the chat over its knowledge base.
      this.logger.warn({ err: error, baseId: this.base.id }, 'knowledge retrieval failed');
      return undefined;
    }
  }

  async call(name: string, args: JsonObject, context: ToolContext): Promise<string> {
    if (name !== SEARCH_TOOL_NAME) return `Error: there is no tool named ${name}.`;
    const query = typeof args.query === 'string' ? args.query.trim().slice(0, MAX_QUERY_CHARS) : '';
    if (!query) return 'Error: query must be a non-empty string.';
    const retrieval = await this.retrieve(query, context);
    if (!retrieval) return 'Error: the knowledge base cannot be searched (no embedding model is configured).';
    return formatExcerpts(retrieval) ?? 'The knowledge base has no documents yet.';
  }

  async close(): Promise<void> {}
}

/** Opens a knowledge toolset for assistants linked to a base of their own owner. */
export class KnowledgeToolsetFactory implements ToolsetFactory {
  constructor(
    private readonly service: KnowledgeService,
    private readonly logger: Logger,
  ) {}

  async open(assistant: Assistant): Promise<Toolset | undefined> {
    const link = assistant.database;
    if (!link) return undefined;
    const base = await this.service.owned(assistant.ownerId, link.id);
    if (!base) {
      this.logger.debug({ assistantId: assistant.id, baseId: link.id }, 'assistant links a knowledge base its owner does not have');
      return undefined;
    }
    return new KnowledgeToolset(this.service, base, link, this.logger);
  }
}
