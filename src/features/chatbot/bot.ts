import { z } from 'zod';

/** A bot integration: a live-chat service's bot, answered by an assistant, paid by its user or organisation. */
export interface Bot {
  id: string;
  /** The owner's label; null for bots made before names existed (or by the admin API without one). */
  name: string | null;
  userId: string;
  orgId: string | null;
  assistantId: string;
  /** The bot token sealed with the server secret (the token itself is shown once; inbound checks use its hash). */
  tokenSealed: string;
  webhookUrl: string | null;
  createdAt: number;
}

/** bot → waiting (INVITE_AGENT sent) → agent (AGENT_JOINED) → closed (CHAT_CLOSED); AGENT_UNAVAILABLE: waiting → bot. */
export type DialogState = 'bot' | 'waiting' | 'agent' | 'closed';

export interface BotDialog {
  id: string;
  botId: string;
  chatId: string;
  clientId: string;
  state: DialogState;
}

const base = {
  id: z.string().min(1).max(200),
  chat_id: z.union([z.string(), z.number()]).transform(String),
  client_id: z.union([z.string(), z.number()]).transform(String),
};

/** SPEC 2.1 inbound events (extra fields the chat service sends, like `sender` or `site_id`, are ignored). */
export const inboundEventSchema = z.discriminatedUnion('event', [
  z.looseObject({
    event: z.literal('CLIENT_MESSAGE'),
    ...base,
    agents_online: z.boolean().default(false),
    message: z.looseObject({
      type: z.string().default('TEXT'),
      text: z.string().max(20_000).default(''),
      timestamp: z.number().optional(),
      images: z.array(z.string()).max(8).optional(),
    }),
  }),
  z.looseObject({ event: z.literal('AGENT_JOINED'), ...base }),
  z.looseObject({ event: z.literal('AGENT_UNAVAILABLE'), ...base }),
  z.looseObject({ event: z.literal('CHAT_CLOSED'), ...base }),
]);

export type InboundEvent = z.output<typeof inboundEventSchema>;
export type ClientMessageEvent = Extract<InboundEvent, { event: 'CLIENT_MESSAGE' }>;

/** An inbound event as the chat service sent it, with the chat it belongs to. */
export interface AcceptedEventInput {
  eventId: string;
  event: string;
  chatId: string;
  clientId: string;
  payload: string;
}

/** Where an outbound event stands; `pending` with `nextAttemptAt` is a retry. */
export interface OutboundOutcome {
  status: 'delivered' | 'failed' | 'pending';
  error: string | null;
  nextAttemptAt?: number;
}

/** The operator's filters over every bot (all optional). */
export interface BotFilter {
  userId?: string | undefined;
  orgId?: string | undefined;
  query?: string | undefined;
}

/** Bots, dialogs, the inbound event log and the outbound queue; storage/bots-repository.ts implements it. */
export interface BotsRepository {
  insert(bot: Bot, tokenHash: string): Promise<void>;
  byTokenHash(hash: string): Promise<Bot | undefined>;
  /** A live bot (a deleted one is gone for the chat service, the workers and the management API alike). */
  get(id: string): Promise<Bot | undefined>;
  setWebhook(id: string, url: string): Promise<void>;
  /** Live bots of a user (`userId`) or of an org (`orgId`), newest first, after the cursor's one. */
  list(owner: { userId: string } | { orgId: string }, limit: number, after: string | undefined): Promise<Bot[]>;
  /** Every live bot (the operator's list), newest first, after the cursor's one; `query` matches name or id. */
  search(filter: BotFilter, limit: number, after: string | undefined): Promise<Bot[]>;
  update(id: string, changes: { name?: string; assistantId?: string; webhookUrl?: string | null }): Promise<void>;
  /** Revokes the bot's token at once; false when it was already deleted. */
  revoke(id: string, now: number): Promise<boolean>;
  /** Revokes the user's bots that charge the org (the user left it); returns their ids. */
  revokeMemberBots(orgId: string, userId: string, now: number): Promise<string[]>;
  /** The open dialog of a chat (not closed), if any. */
  openDialog(botId: string, chatId: string): Promise<BotDialog | undefined>;
  dialog(id: string): Promise<BotDialog | undefined>;
  setState(dialogId: string, state: DialogState, now: number): Promise<void>;
  /**
   * Records an inbound event once (by the chat service's id), opening a dialog for a chat that has none, and queues the
   * reply job for a client message — one transaction. Returns undefined for a repeat.
   */
  acceptEvent(
    bot: Bot,
    event: AcceptedEventInput,
    options: { openDialog: boolean; replyJob: boolean },
    now: number,
  ): Promise<{ eventRowId: string; dialog: BotDialog | undefined } | undefined>;
  event(id: string): Promise<{ botId: string; dialogId: string | null; payload: string } | undefined>;
  /** Queues an outbound event behind the bot's earlier ones, and the job that sends the queue. */
  enqueueOutbound(botId: string, payload: string, now: number): Promise<void>;
  /**
   * Claims the oldest undelivered outbound event of a bot for sending. Undefined when the queue is empty, when its head
   * is claimed by another worker, or when the head waits for its next attempt (`waitUntil` says until when).
   */
  claimHead(botId: string, now: number, claimMs: number): Promise<{ id: string; payload: string; attempts: number } | { waitUntil: number } | undefined>;
  markOutbound(id: string, outcome: OutboundOutcome, now: number): Promise<void>;
}
