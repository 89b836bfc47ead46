import { z } from 'zod';
import { parseAmount } from '../../lib/money.ts';

const decimalText = z
  .union([z.string(), z.number()])
  .transform((value) => String(value))
  .refine((text) => {
    const amount = parseAmount(text);
    return amount !== undefined && amount >= 0n;
  }, 'must be a non-negative decimal up to 1000000000');

export const accessSchema = z.object({
  isPrivate: z.boolean(),
  isFree: z.boolean(),
  installPrice: decimalText,
  hideSettings: z.boolean(),
  orgId: z.string().min(1).nullable(),
});
export type Access = z.output<typeof accessSchema>;

/** Knowledge-base link. `requestFrequency`: `always` retrieves for every message, `auto` when the model asks (a tool). */
export const databaseLinkSchema = z.object({
  id: z.string().min(1),
  requestFrequency: z.enum(['always', 'auto']).default('auto'),
  chunks: z.number().int().min(1).max(20).default(3),
});
export type DatabaseLink = z.output<typeof databaseLinkSchema>;

/** A remote MCP server (Streamable HTTP). */
export const mcpServerSchema = z.object({
  url: z.string().min(1).max(2000),
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,32}$/, 'must be 1-32 letters, digits, _ or -').optional(),
  headers: z.record(z.string(), z.string()).optional(),
  allowedTools: z.array(z.string()).optional(),
});
export type McpServer = z.output<typeof mcpServerSchema>;

/** An HTTP function offered to the model as a tool. */
export const apiFunctionSchema = z.object({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, 'must be 1-64 letters, digits, _ or -'),
  description: z.string().max(1000).default(''),
  parameters: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
  url: z.string().min(1).max(2000),
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']).default('POST'),
  headers: z.record(z.string(), z.string()).optional(),
});
export type ApiFunction = z.output<typeof apiFunctionSchema>;

export const MENTION = /^[a-zA-Z0-9_-]{3,64}$/;

/** Fields of create and update (SPEC 4.4); update sends any subset. */
export const assistantFieldsSchema = z.object({
  mention: z.string().regex(MENTION, 'must be 3-64 letters, digits, _ or -'),
  title: z.string().min(1).max(16, 'must be at most 16 characters'),
  subtitle: z.string().max(32, 'must be at most 32 characters'),
  description: z.string().max(4000),
  picture: z.string().max(2000),
  instruction: z.string().max(32_000),
  modelId: z.string().min(1),
  temperature: z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1'),
  sqlStore: z.boolean(),
  access: accessSchema.partial(),
  database: databaseLinkSchema.nullable(),
  mcp: z.array(mcpServerSchema).max(10),
  apiFunctions: z.array(apiFunctionSchema).max(32),
});

export const createAssistantSchema = assistantFieldsSchema.partial().extend({
  title: assistantFieldsSchema.shape.title,
  modelId: assistantFieldsSchema.shape.modelId,
  useWalletBalance: z.boolean().optional(),
});
export const updateAssistantSchema = assistantFieldsSchema.partial().extend({ id: z.string().min(1) });

/** What is stored for an assistant. */
export interface AssistantSettings {
  title: string;
  subtitle: string;
  description: string;
  picture: string;
  instruction: string;
  modelId: string;
  /** Decimal text, 0 to 1. */
  temperature: string;
  sqlStore: boolean;
  access: Access;
  database: DatabaseLink | null;
  mcp: McpServer[];
  apiFunctions: ApiFunction[];
}

export interface Assistant extends AssistantSettings {
  id: string;
  ownerId: string;
  mention: string;
  likes: number;
  /** Embeddings of the title, the subtitle and the description (catalog semantic search); null when none is configured. */
  embedding: number[][] | null;
  createdAt: number;
  updatedAt: number;
}

/** `capabilities` bit mask (the list response): what an assistant can do beyond plain chat. */
export const CAPABILITY = { vision: 1, knowledgeBase: 2, mcp: 4, functions: 8, sqlStore: 16 } as const;

export interface CatalogFilter {
  /** Organisations whose private assistants the viewer may see. */
  orgIds: readonly string[];
  /** Strict code match (a query starting with `@`). */
  mention?: string;
}

/** A remembered chat message (assistant chat memory, per owner and chat id). */
export interface ChatMessageRecord {
  id: string;
  chatId: string;
  ownerId: string;
  assistantId: string;
  role: 'user' | 'assistant';
  content: string;
  at: number;
}

/** Assistants, their reactions (likes, installs) and chat memory; storage/assistants-repository.ts implements it. */
export interface AssistantsRepository {
  insert(assistant: Assistant): Promise<void>;
  update(assistant: Assistant): Promise<void>;
  /** Removes the assistant with its reactions and chat memory; false when it was already gone. */
  delete(id: string): Promise<boolean>;
  get(id: string): Promise<Assistant | undefined>;
  /** Case-insensitive code match. */
  byMention(mention: string): Promise<Assistant | undefined>;
  /** The owner's assistants, newest first, optionally filtered by a case-insensitive substring of title or code. */
  listByOwner(ownerId: string, query: string, limit: number, offset: number): Promise<{ total: number; items: Assistant[] }>;
  /** Every assistant the viewer may find in the catalog: public ones, and private ones of the viewer's organisations. */
  catalog(filter: CatalogFilter): Promise<Assistant[]>;
  /** Adds a like or an install once per user; returns false when it was already there. */
  react(assistantId: string, userId: string, kind: 'like' | 'install', at: number): Promise<boolean>;
  installedBy(userId: string, assistantIds: readonly string[]): Promise<Set<string>>;
  /** Which of these assistants the user liked. */
  likedBy(userId: string, assistantIds: readonly string[]): Promise<Set<string>>;
  appendMessages(messages: readonly ChatMessageRecord[]): Promise<void>;
  /** The last `limit` messages of a chat, oldest first. */
  recentMessages(ownerId: string, chatId: string, limit: number): Promise<Array<{ role: 'user' | 'assistant'; content: string }>>;
}
