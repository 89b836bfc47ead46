import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { anthropicPromptTokens, countTokens, IMAGE_TOKENS } from '../simulator/server.ts';
import { asArray, asRecord, balanceMicros, charges, errorA, ledger, sseData, tokensCostMicros, userWithOrg, type JsonRecord } from './helpers/e2e.ts';
import { api, catalogPrices, chatRequests, createAssistant, messagesOf, newChatId, newMention, newUser, openAiRoundCost, simulatedReply } from './helpers/assistants-e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';

const INSTRUCTION = 'You are the test assistant. Answer briefly.';
const NOT_FOUND = { error: { message: 'Assistant not found', type: 'invalid_request_error', param: null, code: null } };
const USAGE_FIELDS = ['completion_cost', 'completion_tokens', 'context_messages', 'embedding_cost', 'embedding_tokens', 'prompt_cost', 'prompt_tokens', 'total_cost', 'total_tokens'];
const PLAIN_PRICES = { cost_context: '0.0010', cost_completion: '0.0020' };
const SUNSET_PRICES = { cost_context: '0.0300', cost_completion: '0.0600' };

interface Usage {
  context_messages: number;
  prompt_tokens: number;
  completion_tokens: number;
  embedding_tokens: number;
  total_tokens: number;
  prompt_cost: number;
  completion_cost: number;
  embedding_cost: number;
  total_cost: number;
}
function usageOf(body: JsonRecord): Usage {
  const usage = asRecord(body.usage, 'usage');
  assert.deepEqual(Object.keys(usage).sort(), USAGE_FIELDS);
  for (const field of USAGE_FIELDS) assert.equal(typeof usage[field], 'number', field);
  return usage as unknown as Usage;
}

describe('assistant chat (SPEC 4.3, 2.5)', () => {
  let gw: TestGateway;
  let user: { userId: string; key: string };
  let code: string;

  const chat = (key: string | undefined, body: JsonRecord) => api(gw, 'POST', '/v1/assistant/chat', key, body);
  const assistantOn = async (modelId: string, extra: JsonRecord = {}): Promise<string> => {
    const mention = newMention(modelId.replace(/[^a-z0-9]/gi, '').slice(0, 12));
    await createAssistant(gw, user.key, { mention, title: 'Chatter', instruction: INSTRUCTION, modelId, temperature: 0.2, access: { isPrivate: false }, ...extra });
    return mention;
  };

  before(async () => {
    gw = await startTestGateway();
    user = await newUser(gw, '20.00');
    for (const [id, prices] of [['plain-model', PLAIN_PRICES], ['sunset-model', SUNSET_PRICES]] as const) {
      const put = await gw.admin('PUT', `/models/${id}`, { kind: 'chat', provider: 'openai', vision: false, ...prices });
      assert.equal(put.status, 200, JSON.stringify(put.body));
    }
    code = await assistantOn('gpt-4o-mini');
  });
  after(async () => {
    await gw?.close();
  });

  test('the response has SPEC 2.5’s fields, usage adds up, and the balance drops by exactly total_cost in one ledger entry', async () => {
    const message = 'What is the capital of France, please?';
    const mark = gw.simulator.requests.length;
    const before = await balanceMicros(gw, { userId: user.userId });
    const chargesBefore = charges(await ledger(gw, { userId: user.userId })).length;
    const chatId = newChatId();
    const response = await chat(user.key, { chatId, assistantCode: code, message });
    assert.equal(response.status, 200, response.text);
    const body = response.body;
    assert.equal(typeof body.id, 'string');
    assert.equal(body.chatId, chatId);
    assert.equal(body.assistantCode, code);
    assert.equal(typeof body.assistantId, 'string');
    assert.equal(body.model, 'gpt-4o-mini');
    const reply = simulatedReply(gw, message);
    assert.equal(body.message, reply);

    const sent = chatRequests(gw, mark);
    assert.equal(sent.length, 1);
    const expected = openAiRoundCost(catalogPrices('gpt-4o-mini'), sent[0]!, reply);
    const usage = usageOf(body);
    assert.equal(usage.context_messages, 0);
    assert.equal(usage.prompt_tokens, expected.promptTokens);
    assert.equal(usage.completion_tokens, expected.completionTokens);
    assert.equal(usage.embedding_tokens, 0);
    assert.equal(usage.total_tokens, expected.promptTokens + expected.completionTokens);
    assert.equal(micros(usage.prompt_cost), expected.prompt);
    assert.equal(micros(usage.completion_cost), expected.completion);
    assert.equal(micros(usage.embedding_cost), 0n);
    assert.equal(micros(usage.total_cost), micros(usage.prompt_cost) + micros(usage.completion_cost) + micros(usage.embedding_cost));

    assert.equal(before - (await balanceMicros(gw, { userId: user.userId })), micros(usage.total_cost));
    const rows = charges(await ledger(gw, { userId: user.userId }));
    assert.equal(rows.length, chargesBefore + 1, 'one ledger entry');
    assert.equal(micros(rows.at(-1)!.amount), -micros(usage.total_cost));
  });

  test('chatId must be 24 to 36 characters', async () => {
    for (const chatId of ['c'.repeat(23), 'c'.repeat(37)]) {
      const response = await chat(user.key, { chatId, assistantCode: code, message: 'Hi' });
      assert.equal(response.status, 400, response.text);
      const error = errorA(response.body);
      assert.equal(error.type, 'invalid_request_error');
      assert.ok(error.message.startsWith('chatId: '), error.message);
    }
    assert.equal((await chat(user.key, { chatId: 'c'.repeat(24), assistantCode: code, message: 'Hi' })).status, 200);
    assert.equal((await chat(user.key, { chatId: 'd'.repeat(36), assistantCode: code, message: 'Hi' })).status, 200);
  });

  test('unknown code → 404 Assistant not found; no key → 401 Unauthorized', async () => {
    const unknown = await chat(user.key, { chatId: newChatId(), assistantCode: 'no-such-assistant-code', message: 'Hi' });
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, NOT_FOUND);
    const anonymous = await chat(undefined, { chatId: newChatId(), assistantCode: code, message: 'Hi' });
    assert.equal(anonymous.status, 401);
    assert.equal(errorA(anonymous.body).type, 'unauthorized_request_error');
    assert.equal(errorA(anonymous.body).message, 'Unauthorized');
  });

  test('memory: maxContext 2 sends the earlier exchange; the default 0 sends only the new message; another user’s same chatId is separate', async () => {
    const chatId = newChatId();
    const first = 'My name is Ada and I like ciphers.';
    assert.equal((await chat(user.key, { chatId, assistantCode: code, message: first })).status, 200);
    const firstReply = simulatedReply(gw, first);

    let mark = gw.simulator.requests.length;
    const second = await chat(user.key, { chatId, assistantCode: code, message: 'What is my name?', maxContext: 2 });
    assert.equal(second.status, 200, second.text);
    assert.equal(usageOf(second.body).context_messages, 2);
    assert.deepEqual(messagesOf(chatRequests(gw, mark)[0]).map((m) => [m.role, m.content]), [
      ['system', INSTRUCTION],
      ['user', first],
      ['assistant', firstReply],
      ['user', 'What is my name?'],
    ]);

    mark = gw.simulator.requests.length;
    const third = await chat(user.key, { chatId, assistantCode: code, message: 'And now?' });
    assert.equal(usageOf(third.body).context_messages, 0);
    assert.deepEqual(messagesOf(chatRequests(gw, mark)[0]).map((m) => [m.role, m.content]), [['system', INSTRUCTION], ['user', 'And now?']]);

    const other = await newUser(gw);
    mark = gw.simulator.requests.length;
    const foreign = await chat(other.key, { chatId, assistantCode: code, message: 'Whose chat is this?', maxContext: 10 });
    assert.equal(foreign.status, 200, foreign.text);
    assert.equal(usageOf(foreign.body).context_messages, 0, 'no history of the first user');
    const seen = JSON.stringify(messagesOf(chatRequests(gw, mark)[0]));
    assert.ok(!seen.includes('Ada'), 'the first user’s messages never reach the other user’s chat');
  });

  test('images: a vision model gets image_url parts; a model without vision is a 400 naming images', async () => {
    const url = 'https://img.example.com/cat.png';
    const mark = gw.simulator.requests.length;
    const before = await balanceMicros(gw, { userId: user.userId });
    const seen = await chat(user.key, { chatId: newChatId(), assistantCode: code, message: 'What is in the picture?', images: [url] });
    assert.equal(seen.status, 200, seen.text);
    const last = messagesOf(chatRequests(gw, mark)[0]).at(-1)!;
    assert.deepEqual(last, { role: 'user', content: [{ type: 'text', text: 'What is in the picture?' }, { type: 'image_url', image_url: { url } }] });
    const usage = usageOf(seen.body);
    assert.ok(usage.prompt_tokens > IMAGE_TOKENS, 'the image is counted in the prompt');
    assert.equal(before - (await balanceMicros(gw, { userId: user.userId })), micros(usage.total_cost));

    const plain = await assistantOn('plain-model');
    const balance = await balanceMicros(gw, { userId: user.userId });
    const refused = await chat(user.key, { chatId: newChatId(), assistantCode: plain, message: 'Look', images: [url] });
    assert.equal(refused.status, 400, refused.text);
    const error = errorA(refused.body);
    assert.equal(error.type, 'invalid_request_error');
    assert.ok(error.message.startsWith('images: '), error.message);
    assert.equal(await balanceMicros(gw, { userId: user.userId }), balance, 'a refused chat costs nothing');
  });

  test('a Claude assistant answers through the same endpoint (the vendor got a /v1/messages request)', async () => {
    const claude = await assistantOn('claude-haiku-4-5');
    const message = 'Explain tides in one line.';
    const mark = gw.simulator.requests.length;
    const before = await balanceMicros(gw, { userId: user.userId });
    const response = await chat(user.key, { chatId: newChatId(), assistantCode: claude, message });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.model, 'claude-haiku-4-5');
    assert.equal(response.body.message, simulatedReply(gw, message));
    const sent = gw.simulator.requests.slice(mark).filter((request) => request.path === '/v1/messages');
    assert.equal(sent.length, 1, 'one Messages API request');
    const json = asRecord(sent[0]!.json);
    assert.equal(json.model, 'claude-haiku-4-5-20251001');
    assert.ok(JSON.stringify(json.system).includes(INSTRUCTION), 'the instruction is the system prompt');
    const usage = usageOf(response.body);
    const prices = catalogPrices('claude-haiku-4-5');
    assert.equal(usage.prompt_tokens, anthropicPromptTokens(json));
    assert.equal(usage.completion_tokens, countTokens(String(response.body.message)));
    assert.equal(micros(usage.total_cost), tokensCostMicros(usage.prompt_tokens, prices.cost_context) + tokensCostMicros(usage.completion_tokens, prices.cost_completion));
    assert.equal(before - (await balanceMicros(gw, { userId: user.userId })), micros(usage.total_cost));
  });

  test('stream: delta frames, then the whole response, then [DONE]; charged the same as without stream', async () => {
    const message = 'Tell me about streaming responses.';
    const plainBefore = await balanceMicros(gw, { userId: user.userId });
    const plain = await chat(user.key, { chatId: newChatId(), assistantCode: code, message });
    assert.equal(plain.status, 200, plain.text);
    const plainCharge = plainBefore - (await balanceMicros(gw, { userId: user.userId }));

    const before = await balanceMicros(gw, { userId: user.userId });
    const chatId = newChatId();
    const streamed = await chat(user.key, { chatId, assistantCode: code, message, stream: true });
    assert.equal(streamed.status, 200);
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const payloads = sseData(streamed.text);
    assert.equal(payloads.at(-1), '[DONE]');
    const frames = payloads.slice(0, -1).map((payload) => asRecord(JSON.parse(payload)));
    const final = frames.at(-1)!;
    const deltas = frames.slice(0, -1);
    assert.ok(deltas.length >= 2, 'the reply arrives in pieces');
    for (const frame of deltas) {
      assert.equal(frame.chatId, chatId);
      assert.equal(frame.assistantCode, code);
      assert.equal(typeof frame.delta, 'string');
    }
    assert.equal(deltas.map((frame) => frame.delta).join(''), plain.body.message);
    assert.equal(final.message, plain.body.message);
    assert.equal(final.chatId, chatId);
    const usage = usageOf(final);
    assert.deepEqual(usage, usageOf(plain.body));
    const charged = before - (await balanceMicros(gw, { userId: user.userId }));
    assert.equal(charged, micros(usage.total_cost));
    assert.equal(charged, plainCharge, 'a streamed reply costs what the same reply costs without stream');
  });

  test('useWalletBalance with an org key charges the user, not the organisation', async () => {
    const { userId, orgId } = await userWithOrg(gw, { user: '3.00', org: '4.00' });
    const { key } = await gw.fundedKey({ userId, orgId });
    const state = async () => ({ user: await balanceMicros(gw, { userId }), org: await balanceMicros(gw, { orgId }) });

    const start = await state();
    const byOrg = await chat(key, { chatId: newChatId(), assistantCode: code, message: 'Charge the company' });
    assert.equal(byOrg.status, 200, byOrg.text);
    const mid = await state();
    assert.equal(start.org - mid.org, micros(usageOf(byOrg.body).total_cost), 'an org key charges the organisation');
    assert.equal(mid.user, start.user);

    const byWallet = await chat(key, { chatId: newChatId(), assistantCode: code, message: 'Charge me', useWalletBalance: true });
    assert.equal(byWallet.status, 200, byWallet.text);
    const end = await state();
    assert.equal(mid.user - end.user, micros(usageOf(byWallet.body).total_cost), 'useWalletBalance charges the user');
    assert.equal(end.org, mid.org, 'the organisation pays nothing');
  });

  test('a private assistant is 404 for a stranger and answers its owner', async () => {
    const secret = newMention('private');
    await createAssistant(gw, user.key, { mention: secret, title: 'Private', modelId: 'gpt-4o-mini', access: { isPrivate: true } });
    const stranger = await newUser(gw);
    const before = await balanceMicros(gw, { userId: stranger.userId });
    const denied = await chat(stranger.key, { chatId: newChatId(), assistantCode: secret, message: 'Let me in' });
    assert.equal(denied.status, 404);
    assert.deepEqual(denied.body, NOT_FOUND);
    assert.equal(await balanceMicros(gw, { userId: stranger.userId }), before);
    assert.equal((await chat(user.key, { chatId: newChatId(), assistantCode: secret, message: 'It is me' })).status, 200);
  });

  test('retirement: an assistant on a model retired with an analogue still answers, billed at the requested model’s price', async () => {
    const sunset = await assistantOn('sunset-model');
    const retiresAt = new Date(gw.clock.now() + 86_400_000).toISOString();
    const patched = await gw.admin('PATCH', '/models/sunset-model', { deprecated_at: retiresAt, deprecation_redirect_to: 'gpt-4o-mini' });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    gw.clock.advance(2 * 86_400_000);

    const message = 'Are you still there?';
    const mark = gw.simulator.requests.length;
    const before = await balanceMicros(gw, { userId: user.userId });
    const response = await chat(user.key, { chatId: newChatId(), assistantCode: sunset, message });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.message, simulatedReply(gw, message));
    const sent = chatRequests(gw, mark);
    assert.equal(asRecord(sent[0]?.json).model, 'gpt-4o-mini', 'the analogue served it');
    const warnings = asArray(response.body.warnings, 'warnings').map((warning) => asRecord(warning));
    assert.equal(warnings[0]?.code, 'DEPRECATED_MODEL');
    const expected = openAiRoundCost(SUNSET_PRICES, sent[0]!, String(response.body.message));
    const usage = usageOf(response.body);
    assert.equal(micros(usage.total_cost), expected.total, 'priced as sunset-model, not gpt-4o-mini');
    assert.equal(before - (await balanceMicros(gw, { userId: user.userId })), expected.total);
  });
});
