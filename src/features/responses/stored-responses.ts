import type { JsonObject } from '../../core/chat-types.ts';
import type { AccountRef } from '../accounts/accounts.ts';

/**
 * A response made through `POST /v1/responses`, as the gateway keeps it. Every response records who made it (the
 * account of the key, and the key), so only that account reaches it again. Translated (Claude) responses also keep the
 * rendered Response and, unless the request said `store: false`, the turn's input and output items, which
 * `previous_response_id` prepends (following the chain back).
 */
export interface StoredResponse {
  id: string;
  /** The account whose key made it: the key's org for a business key, else its user. */
  owner: AccountRef;
  keyId: string;
  /**
   * The model that served it: the one asked for, its retirement analogue, or a fallback (a follow-up naming the asked model
   * is served by that fallback again). Rows written before fallbacks applied here name the model asked for.
   */
  model: string;
  /** The provider of the served model, whose vendor account keeps a passed-through response. */
  provider: string;
  /** The channel that made it (its vendor account holds a passed-through response); null before channels or when unknown. */
  channel: string | null;
  translated: boolean;
  /** Unix milliseconds. */
  createdAt: number;
  previousResponseId: string | null;
  /** This turn's input items followed by its output items; null when not stored (`store: false`) or passed through. */
  conversation: JsonObject[] | null;
  /** The Response object as returned (translated models). */
  body: JsonObject | null;
}

export interface ResponsesRepository {
  insert(response: StoredResponse): Promise<void>;
  get(id: string): Promise<StoredResponse | undefined>;
  /** Deletes responses created before `cutoff` (Unix ms); returns how many. */
  deleteBefore(cutoff: number): Promise<number>;
}
