import { z } from 'zod';

/** A bot integration: a live-chat service's bot, answered by an assistant, paid by its user or organisation. */
export interface Bot {
  id: string;
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
