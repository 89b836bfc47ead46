import { z } from 'zod';

/** The tags of the OpenAPI document; a route's tag follows from its path unless its declaration names one. */
export const API_TAGS = {
  inference: 'SPEC model endpoints: chat completions, messages, embeddings, moderations, models, transcriptions (API key).',
  tasks: 'SPEC tasks: image and media tasks, result files (API key).',
  assistants: 'SPEC assistants and their knowledge bases (API key).',
  chatbot: 'SPEC 4.1: the chat service\'s side of the bot integration (bot token).',
  management: 'The management API /api/v1: accounts, keys, orgs, usage (signed-in session or management key).',
  admin: 'The admin API /admin/v1 (admin token).',
  health: 'Liveness, readiness and metrics (public).',
} as const;

export type ApiTag = keyof typeof API_TAGS;

/** The answer of a deletion: `{id, object, deleted: true}` (OpenAI's shape). */
export const deletedResponse = z.strictObject({ id: z.string(), object: z.string(), deleted: z.literal(true) });

/**
 * What a route tells the OpenAPI document about itself (GET /openapi.json), attached as `config.doc` of the route.
 *
 * The schemas are the SAME zod constants the handler parses with (`parseOrThrow(schema, request.body)`): declare the
 * constant once at module level, name it in both places, never write a second schema for the document. The document
 * shows each schema's input side (what a client sends: defaults optional, transforms before they run).
 */
export interface RouteDoc {
  /** One line, shown as the operation's title. */
  summary: string;
  description?: string;
  /** Default: from the path (/admin → admin, /api/v1 → management, /v1/assistant → assistants, …). */
  tag?: ApiTag;
  /** The JSON body the handler parses. */
  body?: z.ZodType;
  /** A multipart/form-data body (fields described by this object; files as `z.string().meta({ format: 'binary' })`). */
  form?: z.ZodType;
  /** The query string the handler parses (an object schema: each property becomes a parameter). */
  query?: z.ZodType;
  /** The path parameters the handler parses; without it each `:name` of the path is a string. */
  params?: z.ZodType;
  /** The success body (its output side), where a view is cheap to describe. */
  response?: z.ZodType;
  /** The success body is a list page `{object: "list", data, next_cursor}` (of `response` items when given). */
  list?: boolean;
  /** The route can answer a stream of server-sent events (`stream: true`). */
  stream?: boolean;
  /** The success body is not JSON (a file, metrics text): its content type. */
  produces?: string;
  /** Left out of the document (the document's own routes). */
  hidden?: boolean;
}
