import { z } from 'zod';
import { GatewayError } from '../../core/errors.ts';
import type { JsonObject } from '../../core/chat-types.ts';
import { hmacSha256Hex } from '../../lib/hashing.ts';

/**
 * The fields of a Messages request the gateway itself reads; everything else is forwarded untouched (the vendor rejects
 * what it does not know, SPEC 4.2).
 */
export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1, 'must not be empty'),
  stream: z.boolean().optional(),
  metadata: z.looseObject({}).nullable().optional(),
  tools: z.array(z.looseObject({})).optional(),
  thinking: z.looseObject({ type: z.string().optional() }).nullable().optional(),
  context_management: z.looseObject({ edits: z.array(z.looseObject({ type: z.string().optional() })).optional() }).nullable().optional(),
});

export type MessagesRequest = z.output<typeof messagesRequestSchema>;

/** The `[1m]` suffix a coding client adds to ask for the 1M-token window. */
export const ONE_MILLION_SUFFIX = '[1m]';
export const ONE_MILLION_BETA = 'context-1m-2025-08-07';

/** Fields of other gateways' routing schemes: internal, never forwarded (SPEC 4.2). */
const ROUTING_FIELDS = ['provider', 'route', 'models', 'transforms', 'preset', 'plugins'] as const;

/** Tools billed by container time, not tokens: refused (SPEC 4.2, Tools 3). */
const isCodeExecutionTool = (tool: JsonObject): boolean =>
  (typeof tool.type === 'string' && tool.type.startsWith('code_execution')) ||
  tool.name === 'code_execution' ||
  tool.name === 'bash_code_execution' ||
  tool.name === 'text_editor_code_execution';

/** Splits a model id into the catalog id and whether the 1M window was asked for. */
export function splitModelId(model: string): { id: string; oneMillion: boolean } {
  return model.endsWith(ONE_MILLION_SUFFIX) ? { id: model.slice(0, -ONE_MILLION_SUFFIX.length), oneMillion: true } : { id: model, oneMillion: false };
}

export interface RewriteContext {
  /** The vendor's id of the model that serves. */
  upstreamModel: string;
  /** The catalog's small tier (e.g. Haiku): no adaptive thinking, no output_config. */
  smallTier: boolean;
  /** False for business keys whose organisation has prompt caching off: every cache_control goes. */
  promptCaching: boolean;
  /** Secret of the keyed hash that replaces metadata.user_id. */
  hashSecret: string;
  /** The account the key belongs to: the same user_id sent by two customers hashes differently. */
  tenant: string;
}

/** Checks the tools: code execution is refused with 400 (shape B). */
export function checkTools(body: JsonObject): void {
  if (!Array.isArray(body.tools)) return;
  for (const tool of body.tools as JsonObject[]) {
    if (tool && typeof tool === 'object' && isCodeExecutionTool(tool)) {
      throw new GatewayError('unsupported_tool', 'tools: the code_execution tool is not supported through this gateway (it is billed by container time)', { param: 'tools' });
    }
  }
}

/** metadata: only `user_id`, replaced by a keyed hash so the vendor sees a stable id it cannot link to the user. */
function rewriteMetadata(body: JsonObject, secret: string, tenant: string): void {
  const metadata = body.metadata;
  if (metadata === undefined || metadata === null) return;
  const entries = Object.entries(metadata as JsonObject);
  const other = entries.find(([key]) => key !== 'user_id');
  if (other) throw new GatewayError('invalid_request', `metadata.${other[0]}: Extra inputs are not permitted (only user_id is accepted)`, { param: `metadata.${other[0]}` });
  const userId = (metadata as JsonObject).user_id;
  if (userId === undefined || userId === null) return;
  if (typeof userId !== 'string') throw new GatewayError('invalid_request', 'metadata.user_id: must be a string', { param: 'metadata.user_id' });
  body.metadata = { user_id: hmacSha256Hex(secret, `metadata.user_id:${tenant}:${userId}`).slice(0, 40) };
}

function rewriteContextManagement(body: JsonObject): void {
  const management = body.context_management as { edits?: JsonObject[] } | null | undefined;
  if (!management || !Array.isArray(management.edits)) return;
  const thinking = body.thinking as JsonObject | null | undefined;
  const thinkingOn = !!thinking && thinking.type !== 'disabled';
  if (thinkingOn) return;
  const edits = management.edits.filter((edit) => !(typeof edit.type === 'string' && edit.type.startsWith('clear_thinking_')));
  if (edits.length === 0) delete body.context_management;
  else body.context_management = { ...management, edits };
}

/** Removes every cache_control breakpoint: top level, tools, system blocks, message blocks and the blocks inside tool results. */
export function stripCacheControl(body: JsonObject): void {
  delete body.cache_control;
  const strip = (blocks: unknown): unknown =>
    Array.isArray(blocks)
      ? blocks.map((block) => {
          if (!block || typeof block !== 'object') return block;
          const { cache_control: _removed, ...rest } = block as JsonObject;
          if (Array.isArray(rest.content)) rest.content = strip(rest.content);
          return rest;
        })
      : blocks;
  if (Array.isArray(body.tools)) body.tools = strip(body.tools);
  if (Array.isArray(body.system)) body.system = strip(body.system);
  if (Array.isArray(body.messages)) {
    body.messages = (body.messages as JsonObject[]).map((message) =>
      message && typeof message === 'object' && Array.isArray(message.content) ? { ...message, content: strip(message.content) } : message,
    );
  }
}

/**
 * SPEC 4.2's changes to a Messages body, and nothing else: metadata, service_tier, context_management, small-tier
 * fields, model id, routing fields, and (by policy) cache_control. Returns a new object; the input is not changed.
 */
export function rewriteMessagesRequest(input: JsonObject, context: RewriteContext): JsonObject {
  const body: JsonObject = { ...input, model: context.upstreamModel };
  checkTools(body);
  rewriteMetadata(body, context.hashSecret, context.tenant);
  delete body.service_tier;
  for (const field of ROUTING_FIELDS) delete body[field];
  // Small-tier removals first: thinking removed here is thinking off for the context_management rule.
  if (context.smallTier) {
    const thinking = body.thinking as JsonObject | null | undefined;
    if (thinking && thinking.type === 'adaptive') delete body.thinking;
    delete body.output_config;
  }
  rewriteContextManagement(body);
  if (!context.promptCaching) stripCacheControl(body);
  return body;
}

/** anthropic-beta (or partner-beta): `code-execution-*` values removed, the rest kept in order; duplicates dropped. */
export function rewriteBetas(headerValues: ReadonlyArray<string | undefined>, add: readonly string[] = []): string[] {
  const betas: string[] = [];
  for (const value of headerValues) {
    if (!value) continue;
    for (const part of value.split(',')) {
      const beta = part.trim();
      if (beta && !beta.startsWith('code-execution-') && !betas.includes(beta)) betas.push(beta);
    }
  }
  for (const beta of add) if (!betas.includes(beta)) betas.push(beta);
  return betas;
}
