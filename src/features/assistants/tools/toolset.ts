import type { JsonObject } from '../../../core/chat-types.ts';
import type { Caller } from '../../inference/model-call.ts';
import type { Assistant } from '../assistant.ts';
import type { ChatCharges } from '../chat-charges.ts';

/** A function offered to the model (OpenAI `tools[].function` shape). */
export interface ToolDefinition {
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  parameters: JsonObject;
}

export interface ToolContext {
  caller: Caller;
  assistant: Assistant;
  chatId: string;
  /** The user's message of this turn. */
  message: string;
  /** Where tools add what they cost (knowledge-base embeddings); it is charged with the chat. */
  charges: ChatCharges;
  /** Aborted when the chat turn is cancelled (client gone) or, inside `call`, when the call's time is up: stop the work then. */
  signal: AbortSignal;
}

/**
 * What an assistant can use besides the model: knowledge base, MCP servers, API functions, SQL store, hand-over.
 * A toolset is opened per chat turn and closed after it. A failing tool answers with an error text for the model,
 * never by throwing out of the chat.
 */
export interface Toolset {
  readonly definitions: readonly ToolDefinition[];
  /** Text added to the system prompt for this turn (e.g. knowledge retrieved with requestFrequency `always`). */
  systemContext?(context: ToolContext): Promise<string | undefined>;
  /** Runs one call; the returned text goes back to the model as the tool result. Honours `context.signal`. */
  call(name: string, args: JsonObject, context: ToolContext): Promise<string>;
  close(): Promise<void>;
}

/** Makes the toolset an assistant's settings ask for, or undefined when they ask for none of this kind. */
export interface ToolsetFactory {
  open(assistant: Assistant, caller: Caller): Promise<Toolset | undefined>;
}
