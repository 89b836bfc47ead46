import { EventSourceParserStream } from 'eventsource-parser/stream';
import { ApiError, apiResponse } from './client.ts';

/** The assistants' answers as the console reads them (SPEC 2.6 through /api/v1/assistants); money stays decimal text. */

export interface AssistantAccess {
  isPrivate: boolean;
  isFree: boolean;
  installPrice: string;
  hideSettings: boolean;
  orgId: string | null;
}

export interface KnowledgeLink {
  id: string;
  requestFrequency: 'always' | 'auto';
  chunks: number;
}

/** What every view of an assistant shows: its list item, its full form and its public catalog card. */
interface AssistantBasics {
  object: 'assistant';
  id: string;
  createDate: string;
  updateDate: string;
  mention: string;
  title: string;
  subtitle: string;
  description: string;
  picture: string;
  modelId: string;
}

/** An assistant as its list shows it (SPEC 4.5's item). */
export interface AssistantItem extends AssistantBasics {
  temperature: string;
  capabilities: number;
  sqlStore: boolean;
  access: AssistantAccess;
  database: KnowledgeLink | null;
  mcp: unknown[];
}

/** Every field, as create, update and GET /api/v1/assistants/:id answer. */
export interface Assistant extends AssistantItem {
  instruction: string;
  apiFunctions: unknown[];
}

export interface AssistantList {
  object: 'list';
  total: number;
  data: AssistantItem[];
  next_cursor: string | null;
}

/** SPEC 2.6's catalog card: public fields only. */
export interface AssistantCard extends AssistantBasics {
  likes: number;
  isInstalled: boolean;
  /** Whether the signed-in viewer liked it: the page's card has it (GET /api/v1/assistants/by-mention/:mention), search cards do not. */
  isLiked?: boolean;
  owner: { id: string; name: string };
  access: { isPrivate: boolean; isFree: boolean; installPrice: string };
}

export interface CatalogPage {
  object: 'list';
  total: number;
  limit: number;
  offset: number;
  data: AssistantCard[];
}

/** SPEC 2.5's chat answer. */
export interface ChatAnswer {
  id: string;
  chatId: string;
  assistantId: string;
  assistantCode: string;
  message: string;
  model: string;
  usage: { total_tokens: number; total_cost: number };
}

/** A knowledge base an assistant may link (GET /api/v1/knowledge). */
export type { KnowledgeBase } from './types.ts';

/** `capabilities` bits (SPEC 4.5 list items), as docs/api.md names them. */
export const CAPABILITY_NAMES: ReadonlyArray<[number, string]> = [
  [1, 'vision'],
  [2, 'knowledge base'],
  [4, 'MCP servers'],
  [8, 'API functions'],
  [16, 'SQL store'],
];

/** A chat id of SPEC 4.3 (24 to 36 characters): 32 random hex digits, made where `crypto.randomUUID` may be missing (plain http). */
export function newChatId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * Sends a chat message and streams the reply (SPEC 4.3's stream): `onDelta` gets the text as it is written; the promise
 * ends with the whole answer (SPEC 2.5). A failure before the stream starts is the API's error; one during it, too.
 */
export async function streamChat(assistantId: string, body: { chatId: string; message: string; maxContext: number }, onDelta: (text: string) => void): Promise<ChatAnswer> {
  const response = await apiResponse('POST', `/api/v1/assistants/${encodeURIComponent(assistantId)}/chat`, { ...body, stream: true }, 'text/event-stream');
  if (!response.body) throw new ApiError(0, 'The gateway sent no reply.');
  const events = response.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  let answer: ChatAnswer | undefined;
  try {
    for (;;) {
      const { done, value: event } = await events.read();
      if (done || event.data === '[DONE]') break;
      const frame = JSON.parse(event.data) as Partial<ChatAnswer> & { delta?: string; error?: { message?: string; type?: string } };
      if (frame.error) throw new ApiError(0, frame.error.message ?? 'The reply failed.', frame.error.type ? { type: frame.error.type } : {});
      if (typeof frame.delta === 'string') onDelta(frame.delta);
      else if (typeof frame.message === 'string') answer = frame as ChatAnswer;
    }
  } finally {
    void events.cancel().catch(() => undefined);
  }
  if (!answer) throw new ApiError(0, 'The reply stopped before it was complete.');
  return answer;
}
