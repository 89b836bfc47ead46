import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { toolResultReplyText } from '../simulator/server.ts';
import { asArray, asRecord, balanceMicros, charges, ledger, userWithOrg, type JsonRecord } from './helpers/e2e.ts';
import { catalogPrices, chatRequests, createAssistant, messagesOf, newMention, newUser, openAiRoundCost, simulatedReply } from './helpers/assistants-e2e.ts';
import { startChatService, type FakeChatService } from './helpers/chat-service.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';

const INSTRUCTION = 'You are the support bot of Acme. Be kind.';

interface BotSetup {
  token: string;
  userId: string;
  service: FakeChatService;
}

describe('chat-bot integration (SPEC 2.1, 4.1, 6.1; Jivo bot API)', () => {
  let gw: TestGateway;
  let service: FakeChatService;
  let main: BotSetup;
  const services: FakeChatService[] = [];

  const botPost = async (path: string, token: string | undefined, body?: unknown): Promise<{ status: number; body: JsonRecord }> => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (token !== undefined) headers.authorization = token;
    const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    return { status: response.status, body: text ? asRecord(JSON.parse(text), `${path} body`) : {} };
  };
  /** A user with an assistant and a bot answering to a chat service of its own. */
  const setUpBot = async (options: { balance?: string; orgId?: string; userId?: string; webhook?: boolean } = {}): Promise<BotSetup> => {
    const user = options.userId ? { userId: options.userId, key: (await gw.fundedKey({ userId: options.userId })).key } : await newUser(gw, options.balance ?? '10.00');
    const assistant = await createAssistant(gw, user.key, { mention: newMention('bot'), title: 'Support', instruction: INSTRUCTION, modelId: 'gpt-4o-mini' });
    const own = await startChatService();
    services.push(own);
    const bot = await gw.admin<{ id: string; token: string }>('POST', '/bots', {
      userId: user.userId, orgId: options.orgId ?? null, assistantId: assistant.id, webhookUrl: options.webhook === false ? null : own.url,
    });
    assert.equal(bot.status, 200, JSON.stringify(bot.body));
    return { token: bot.body.token, userId: user.userId, service: own };
  };
  const clientMessage = (chatId: string, text: string, extra: { agentsOnline?: boolean; images?: string[]; id?: string } = {}): JsonRecord => ({
    id: extra.id ?? randomUUID(),
    site_id: '123456',
    client_id: 'client-7',
    chat_id: chatId,
    agents_online: extra.agentsOnline ?? false,
    sender: { id: 7, name: 'John Smith' },
    message: { type: 'TEXT', text, timestamp: Math.floor(gw.clock.now() / 1000), ...(extra.images ? { images: extra.images } : {}) },
    channel: { id: '1', type: 'widget' },
    event: 'CLIENT_MESSAGE',
  });
  const chatEvent = (event: string, chatId: string): JsonRecord => ({ event, id: randomUUID(), chat_id: chatId, client_id: 'client-7' });
  const send = async (bot: BotSetup, event: JsonRecord): Promise<void> => {
    const response = await botPost('/api/bot', bot.token, event);
    assert.equal(response.status, 200, JSON.stringify(response.body));
  };
  const forChat = (bot: BotSetup, chatId: string) => bot.service.delivered.map((delivery) => delivery.json).filter((json) => json.chat_id === chatId);
  const chargeCount = async (userId: string): Promise<number> => charges(await ledger(gw, { userId })).length;

  before(async () => {
    gw = await startTestGateway();
    main = await setUpBot();
    service = main.service;
  });
  after(async () => {
    await gw?.close();
    for (const own of services) await own.close();
  });

  test('config: a URL is accepted with {ok: true, message: OK}; an invalid or private URL is a 400 {ok: false, message}', async () => {
    assert.deepEqual(await botPost('/api/bot/config', main.token, { webHookUrl: service.url }), { status: 200, body: { ok: true, message: 'OK' } });
    const invalid = await botPost('/api/bot/config', main.token, { webHookUrl: 'not a url' });
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.ok, false);
    assert.equal(typeof invalid.body.message, 'string');

    const guarded = await startTestGateway({ config: { allowPrivateUrls: false }, simulator: gw.simulator });
    try {
      const owner = await guarded.fundedKey();
      const assistant = await fetch(`${guarded.url}/v1/assistant/create`, {
        method: 'POST', headers: { authorization: `Bearer ${owner.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Guarded', modelId: 'gpt-4o-mini' }),
      });
      const assistantId = String(asRecord(await assistant.json()).id);
      const bot = await guarded.admin<{ token: string }>('POST', '/bots', { userId: owner.userId, assistantId });
      assert.equal(bot.status, 200, JSON.stringify(bot.body));
      for (const url of ['http://127.0.0.1:8080/hook', 'http://10.1.2.3/hook', 'http://192.168.0.10/hook']) {
        const refused = await fetch(`${guarded.url}/api/bot/config`, { method: 'POST', headers: { authorization: bot.body.token, 'content-type': 'application/json' }, body: JSON.stringify({ webHookUrl: url }) });
        assert.equal(refused.status, 400, url);
        const body = asRecord(await refused.json());
        assert.equal(body.ok, false);
        assert.equal(typeof body.message, 'string');
      }
    } finally {
      await guarded.close();
    }
  });

  test('balance: no body → {ok, message, balance} of the paying account; an org bot shows the organisation’s balance', async () => {
    const own = await botPost('/api/bot/balance', main.token);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.deepEqual(Object.keys(own.body).sort(), ['balance', 'message', 'ok']);
    assert.equal(own.body.ok, true);
    assert.equal(own.body.message, 'OK');
    assert.match(String(own.body.balance), /^-?\d+(\.\d+)?$/);
    assert.equal(micros(String(own.body.balance)), await balanceMicros(gw, { userId: main.userId }));

    const { userId, orgId } = await userWithOrg(gw, { user: '3.00', org: '7.25' });
    const orgBot = await setUpBot({ userId, orgId });
    const org = await botPost('/api/bot/balance', orgBot.token);
    assert.equal(org.status, 200);
    assert.equal(micros(String(org.body.balance)), 7_250_000n);
  });

  test('a bad or missing token is 401 on all three endpoints; a malformed or unknown event is 400', async () => {
    for (const path of ['/api/bot', '/api/bot/balance', '/api/bot/config']) {
      const body = path === '/api/bot' ? clientMessage(randomUUID(), 'hi') : path === '/api/bot/config' ? { webHookUrl: service.url } : undefined;
      assert.equal((await botPost(path, 'tgb-not-a-real-token', body)).status, 401, path);
      assert.equal((await botPost(path, undefined, body)).status, 401, path);
    }
    const malformed = clientMessage(randomUUID(), 'no chat id');
    delete malformed.chat_id;
    assert.equal((await botPost('/api/bot', main.token, malformed)).status, 400);
    assert.equal((await botPost('/api/bot', main.token, { ...chatEvent('CLIENT_WAVED', randomUUID()) })).status, 400);
    await gw.app.services.runner.runDue();
    assert.equal(service.delivered.length, 0, 'nothing was answered');
  });

  test('CLIENT_MESSAGE: 200 at once, then one BOT_MESSAGE with SPEC 2.1’s fields and headers, charged once; a repeated id is ignored', async () => {
    const chatId = `chat-${randomUUID()}`;
    const text = 'Hello! Do you deliver on Sundays?';
    const event = clientMessage(chatId, text);
    const mark = gw.simulator.requests.length;
    const balanceBefore = await balanceMicros(gw, { userId: main.userId });
    const chargesBefore = await chargeCount(main.userId);
    await send(main, event);
    assert.equal(forChat(main, chatId).length, 0, 'answered before any reply is made');
    assert.equal(chatRequests(gw, mark).length, 0, 'the model is called by the job, not the request');

    await gw.app.services.runner.runDue();
    const received = forChat(main, chatId);
    assert.equal(received.length, 1, JSON.stringify(received));
    const reply = received[0]!;
    assert.deepEqual(Object.keys(reply).sort(), ['chat_id', 'client_event_id', 'client_id', 'event', 'id', 'message']);
    assert.equal(reply.event, 'BOT_MESSAGE');
    assert.equal(typeof reply.id, 'string');
    assert.notEqual(reply.id, event.id);
    assert.equal(reply.chat_id, chatId);
    assert.equal(reply.client_id, 'client-7');
    assert.equal(reply.client_event_id, event.id);
    const expectedText = simulatedReply(gw, text);
    assert.deepEqual(reply.message, { type: 'MARKDOWN', text: expectedText, content: expectedText, timestamp: Math.floor(gw.clock.now() / 1000) });
    const headers = service.delivered.find((delivery) => delivery.json === reply)!.headers;
    assert.equal(headers.authorization, main.token);
    assert.match(headers['content-type'] ?? '', /^application\/json/);

    const sent = chatRequests(gw, mark);
    assert.equal(sent.length, 1);
    const cost = openAiRoundCost(catalogPrices('gpt-4o-mini'), sent[0]!, expectedText);
    assert.equal(balanceBefore - (await balanceMicros(gw, { userId: main.userId })), cost.total, 'the balance drops by the chat’s cost');
    assert.equal(await chargeCount(main.userId), chargesBefore + 1, 'one ledger entry');

    await send(main, event);
    await gw.app.services.runner.runDue();
    assert.equal(forChat(main, chatId).length, 1, 'a repeated event id gets no second reply');
    assert.equal(chatRequests(gw, mark).length, 1);
    assert.equal(await chargeCount(main.userId), chargesBefore + 1, 'and no second charge');
  });

  test('the dialog’s earlier messages are the context; images go to the vision model', async () => {
    const chatId = `chat-${randomUUID()}`;
    await send(main, clientMessage(chatId, 'I ordered a blue kettle.'));
    await gw.app.services.runner.runDue();
    const mark = gw.simulator.requests.length;
    await send(main, clientMessage(chatId, 'Here is a photo of it', { images: ['https://img.example.com/kettle.jpg'] }));
    await gw.app.services.runner.runDue();
    assert.equal(forChat(main, chatId).length, 2);
    assert.deepEqual(messagesOf(chatRequests(gw, mark)[0]).map((m) => [m.role, m.content]), [
      ['system', INSTRUCTION],
      ['user', 'I ordered a blue kettle.'],
      ['assistant', simulatedReply(gw, 'I ordered a blue kettle.')],
      ['user', [{ type: 'text', text: 'Here is a photo of it' }, { type: 'image_url', image_url: { url: 'https://img.example.com/kettle.jpg' } }]],
    ]);
  });

  test('a whole dialog: reply → ask for a human → INVITE_AGENT → AGENT_JOINED silences the bot → CHAT_CLOSED → a new dialog', async () => {
    const chatId = `chat-${randomUUID()}`;
    const run = () => gw.app.services.runner.runDue();
    const first = clientMessage(chatId, 'Where is my parcel?');
    await send(main, first);
    await run();
    assert.deepEqual(forChat(main, chatId).map((e) => [e.event, e.client_event_id]), [['BOT_MESSAGE', first.id]]);

    const ask = clientMessage(chatId, 'I want a human operator', { agentsOnline: true });
    await send(main, ask);
    await run();
    const invite = forChat(main, chatId)[1];
    assert.ok(invite, 'an event was sent');
    assert.deepEqual(Object.keys(invite).sort(), ['chat_id', 'client_event_id', 'client_id', 'event', 'id']);
    assert.deepEqual({ ...invite, id: undefined }, { event: 'INVITE_AGENT', id: undefined, chat_id: chatId, client_id: 'client-7', client_event_id: ask.id });
    assert.equal(forChat(main, chatId).length, 2, 'no BOT_MESSAGE for the request for a human');

    await send(main, chatEvent('AGENT_JOINED', chatId));
    let mark = gw.simulator.requests.length;
    const chargesBefore = await chargeCount(main.userId);
    await send(main, clientMessage(chatId, 'Hello operator, are you there?', { agentsOnline: true }));
    await run();
    assert.equal(forChat(main, chatId).length, 2, 'the bot is silent while an operator has the chat');
    assert.equal(chatRequests(gw, mark).length, 0);
    assert.equal(await chargeCount(main.userId), chargesBefore, 'and charges nothing');

    await send(main, chatEvent('CHAT_CLOSED', chatId));
    const reopened = clientMessage(chatId, 'Hi again, new question');
    mark = gw.simulator.requests.length;
    await send(main, reopened);
    await run();
    const last = forChat(main, chatId).at(-1)!;
    assert.deepEqual([last.event, last.client_event_id], ['BOT_MESSAGE', reopened.id], 'a later message opens a new dialog');
    const context = JSON.stringify(messagesOf(chatRequests(gw, mark)[0]));
    assert.ok(!context.includes('Where is my parcel?') && !context.includes('operator'), `the new dialog starts fresh: ${context}`);
  });

  test('AGENT_UNAVAILABLE after INVITE_AGENT gives the dialog back to the bot', async () => {
    const chatId = `chat-${randomUUID()}`;
    await send(main, clientMessage(chatId, 'Can I talk to a human?', { agentsOnline: true }));
    await gw.app.services.runner.runDue();
    assert.deepEqual(forChat(main, chatId).map((e) => e.event), ['INVITE_AGENT']);
    await send(main, chatEvent('AGENT_UNAVAILABLE', chatId));
    const next = clientMessage(chatId, 'Fine, then help me yourself.');
    await send(main, next);
    await gw.app.services.runner.runDue();
    assert.deepEqual(forChat(main, chatId).map((e) => [e.event, e.client_event_id ?? null]).at(-1), ['BOT_MESSAGE', next.id]);
  });

  test('asking for a human with nobody online: a reply, no invite, and the model is told no operator is available', async () => {
    const chatId = `chat-${randomUUID()}`;
    const mark = gw.simulator.requests.length;
    await send(main, clientMessage(chatId, 'I want a human operator', { agentsOnline: false }));
    await gw.app.services.runner.runDue();
    assert.deepEqual(forChat(main, chatId).map((e) => e.event), ['BOT_MESSAGE']);
    const system = messagesOf(chatRequests(gw, mark)[0])[0]!;
    assert.equal(system.role, 'system');
    assert.ok(String(system.content).startsWith(INSTRUCTION), String(system.content));
    assert.match(String(system.content), /no (human )?operator is (online|available)/i);
  });

  test('with operators online the model may hand over through the invite_agent tool: BOT_MESSAGE, then INVITE_AGENT', async () => {
    const chatId = `chat-${randomUUID()}`;
    const question = clientMessage(chatId, 'Do you ship to Canada?', { agentsOnline: true });
    const mark = gw.simulator.requests.length;
    const chargesBefore = await chargeCount(main.userId);
    await send(main, question);
    await gw.app.services.runner.runDue();
    const offered = asArray(asRecord(chatRequests(gw, mark)[0]?.json).tools).map((tool) => asRecord(asRecord(tool).function).name);
    assert.deepEqual(offered, ['invite_agent']);
    const events = forChat(main, chatId);
    assert.deepEqual(events.map((e) => [e.event, e.client_event_id]), [['BOT_MESSAGE', question.id], ['INVITE_AGENT', question.id]]);
    const toolResult = String(messagesOf(chatRequests(gw, mark)[1]).at(-1)?.content);
    assert.equal(asRecord(events[0]!.message).text, toolResultReplyText(toolResult));
    assert.equal(await chargeCount(main.userId), chargesBefore + 1, 'both model rounds in one charge');
  });

  test('balance rule: with the paying balance at 0 nothing is produced and nothing charged; after a top-up the bot answers', async () => {
    const poor = await setUpBot({ balance: '1.00' });
    const debit = await gw.admin('POST', '/balance', { userId: poor.userId, amount: '-1.00' });
    assert.equal(debit.status, 200, JSON.stringify(debit.body));
    const entries = (await ledger(gw, { userId: poor.userId })).length;
    const mark = gw.simulator.requests.length;
    const chatId = `chat-${randomUUID()}`;
    await send(poor, clientMessage(chatId, 'Anyone there?'));
    await gw.app.services.runner.runDue();
    assert.equal(poor.service.attempts, 0, 'nothing sent to the chat service');
    assert.equal(chatRequests(gw, mark).length, 0, 'the model was not called');
    assert.equal((await ledger(gw, { userId: poor.userId })).length, entries, 'no ledger entry');
    assert.equal(await balanceMicros(gw, { userId: poor.userId }), 0n);

    await gw.admin('POST', '/balance', { userId: poor.userId, amount: '1.00' });
    await send(poor, clientMessage(chatId, 'Now?'));
    await gw.app.services.runner.runDue();
    assert.deepEqual(poor.service.events('BOT_MESSAGE').map((e) => asRecord(e.message).text), [simulatedReply(gw, 'Now?')]);
  });

  test('replies keep the order of the client messages even when the model answers the first one more slowly', async () => {
    const bot = await setUpBot();
    const chatId = `chat-${randomUUID()}`;
    gw.simulator.addFault({ match: { path: '/v1/chat/completions' }, times: 1, delayMs: 300 });
    const sent = [clientMessage(chatId, 'One: a slow question'), clientMessage(chatId, 'Two: a quick one'), clientMessage(chatId, 'Three: another')];
    for (const event of sent) await send(bot, event);
    await gw.app.services.runner.runDue();
    assert.deepEqual(bot.service.events('BOT_MESSAGE').map((e) => e.client_event_id), sent.map((e) => e.id));
  });

  test('a chat service down for a while (503, then a closed port) gets every reply once, in order', async () => {
    const down = await setUpBot();
    const run = () => gw.app.services.runner.runDue();
    const chatId = `chat-${randomUUID()}`;
    down.service.unavailable = true;
    const sent = [clientMessage(chatId, 'First message'), clientMessage(chatId, 'Second message'), clientMessage(chatId, 'Third message')];
    for (const event of sent) await send(down, event);
    await run();
    assert.ok(down.service.attempts >= 1, 'a delivery was tried');
    assert.equal(down.service.delivered.length, 0);

    gw.clock.advance(5_000);
    await run();
    assert.ok(down.service.attempts >= 2, 'retried after about 5 s (answered 503 again)');
    await down.service.stop();
    gw.clock.advance(20_000);
    await run();
    gw.clock.advance(60_000);
    await run();
    assert.equal(down.service.delivered.length, 0, 'nothing arrives while the service is down');

    await down.service.start();
    down.service.unavailable = false;
    gw.clock.advance(180_000);
    await run();
    gw.clock.advance(600_000);
    await run();
    const replies = down.service.events('BOT_MESSAGE');
    assert.deepEqual(replies.map((e) => e.client_event_id), sent.map((e) => e.id), 'every reply, once, in the order of the client messages');
    assert.equal(new Set(replies.map((e) => e.id)).size, 3);
  });
});
