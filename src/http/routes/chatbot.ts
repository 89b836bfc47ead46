import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../../core/errors.ts';
import { parseOrThrow, validationError } from '../../dialects/validation.ts';
import { inboundEventSchema } from '../../features/chatbot/bot.ts';
import type { ChatbotService } from '../../features/chatbot/chatbot-service.ts';
import { formatMoney } from '../../lib/money.ts';

const configSchema = z.object({ webHookUrl: z.string().min(1, 'must not be empty') });
const settings = { auth: 'none', errorShape: 'bot' } as const;

const tokenOf = (request: FastifyRequest): string | undefined => {
  const header = request.headers.authorization;
  return typeof header === 'string' ? header : undefined;
};

/** SPEC 4.1: the chat service's side of the bot integration. Authenticated by the bot token, not an API key. */
export function registerChatbotRoutes(app: FastifyInstance, chatbot: ChatbotService): void {
  app.post('/api/bot', { config: { ...settings, name: 'bot.event', doc: { summary: 'Receive a chat service event (SPEC 2.1, 4.1)', body: inboundEventSchema } } }, async (request) => {
    const bot = await chatbot.authenticate(tokenOf(request));
    const parsed = inboundEventSchema.safeParse(request.body);
    if (!parsed.success) {
      const known = typeof (request.body as { event?: unknown } | null)?.event === 'string';
      throw known ? validationError(parsed.error) : new GatewayError('invalid_request', 'event: must be one of CLIENT_MESSAGE, AGENT_JOINED, AGENT_UNAVAILABLE, CHAT_CLOSED', { param: 'event' });
    }
    // Answered at once: the chat service gives up after a few seconds; the reply is a job.
    const { duplicate } = await chatbot.receive(bot, parsed.data, JSON.stringify(request.body));
    return { ok: true, message: duplicate ? 'DUPLICATE' : 'OK' };
  });

  app.post('/api/bot/balance', { config: { ...settings, name: 'bot.balance', doc: { summary: 'The bot owner\'s balance (SPEC 2.2)' } } }, async (request) => {
    const bot = await chatbot.authenticate(tokenOf(request));
    return { ok: true, message: 'OK', balance: formatMoney(await chatbot.balance(bot)) };
  });

  app.post('/api/bot/config', { config: { ...settings, name: 'bot.config', doc: { summary: 'Set where the bot\'s replies are posted', body: configSchema } } }, async (request) => {
    const bot = await chatbot.authenticate(tokenOf(request));
    const body = parseOrThrow(configSchema, request.body ?? {});
    await chatbot.configure(bot, body.webHookUrl);
    return { ok: true, message: 'OK' };
  });
}
