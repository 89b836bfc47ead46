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
