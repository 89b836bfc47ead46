/**
 * Canonical chat types: the OpenAI chat-completions wire format, which every provider adapter speaks on its inside
 * (the Anthropic adapter converts to and from it). Only the fields the gateway reads are typed; the rest pass as they are.
 */
export type JsonObject = Record<string, unknown>;

export interface ChatMessage extends JsonObject {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool' | 'function';
  content?: unknown;
}

/**
 * A reasoning block an assistant turn carried (Anthropic's `thinking`, with the signature the vendor needs to see it again).
 * Canonical messages carry them as `thinking_blocks` (LiteLLM's name) — only on the Responses path, which asks for
 * reasoning with the canonical request's `reasoning: {effort}`; the chat-completions endpoint never sets either.
 */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface ChatRequest extends JsonObject {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } & JsonObject;
}

/** Usage as the OpenAI format reports it, plus the Anthropic cache fields an adapter may carry over. */
export interface ChatUsage extends JsonObject {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number } & JsonObject;
  /** Set by the Anthropic adapter: tokens written to the prompt cache (5 minute and 1 hour lifetimes). */
  cache_creation_input_tokens?: number;
  cache_creation_1h_input_tokens?: number;
}

export interface ChatResponse extends JsonObject {
  id: string;
  object: 'chat.completion';
  model: string;
  choices: Array<JsonObject & { index: number; message: ChatMessage; finish_reason: string | null }>;
  usage?: ChatUsage;
}

export interface ChatChunk extends JsonObject {
  id: string;
  object: 'chat.completion.chunk';
  model: string;
  choices: Array<JsonObject & { index: number; delta: JsonObject & { content?: string | null }; finish_reason: string | null }>;
  usage?: ChatUsage | null;
}

/** One event of an upstream chat stream, with the frame's original text kept so an unchanged frame is passed on as is. */
export type ChatStreamEvent = { kind: 'chunk'; chunk: ChatChunk; raw: string } | { kind: 'error'; error: JsonObject; raw: string };

export interface EmbeddingsRequest extends JsonObject {
  model: string;
  input: unknown;
}

export interface EmbeddingsResponse extends JsonObject {
  object: 'list';
  data: unknown[];
  model: string;
  usage?: { prompt_tokens: number; total_tokens: number } & JsonObject;
}

export interface ModerationRequest extends JsonObject {
  model: string;
  input: unknown;
}

export interface ModerationResponse extends JsonObject {
  id: string;
  model: string;
  results: Array<JsonObject & { flagged: boolean; categories: Record<string, boolean | null>; category_scores: Record<string, number> }>;
}
