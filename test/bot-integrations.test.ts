import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startChatService, type FakeChatService } from './helpers/chat-service.ts';
import { createAssistant, newMention } from './helpers/assistants-e2e.ts';
import { errorA } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { apiClient, createCustomer, managementKey, signIn, type SignedInClient } from './helpers/management.ts';

interface BotView {
  id: string;
  name: string;
  userId: string;
  orgId: string | null;
  assistantId: string;
  webhookUrl: string | null;
  token?: string;
}

/** SPEC 4.1 rule 1 and DESIGN §10 /bots: an owner names a bot, picks the assistant, sets the webhook URL, sees the token once. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`bot integrations through the management API (${database})`, () => {
    let gw: TestGateway;
    const services: FakeChatService[] = [];
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
      for (const service of services) await service.close();
    });

    const chatService = async (): Promise<FakeChatService> => {
      const service = await startChatService();
      services.push(service);
      return service;
    };
    /** A signed-in customer with an inference key and an assistant of their own (private unless `isPrivate: false`). */
    const owner = async (options: { isPrivate?: boolean } = {}): Promise<{ userId: string; client: SignedInClient; key: string; assistantId: string }> => {
      const customer = await createCustomer(gw);
      const { key } = await gw.fundedKey({ userId: customer.userId });
      const assistant = await createAssistant(gw, key, { mention: newMention('bot'), title: 'Support', instruction: 'Be kind.', modelId: 'gpt-4o-mini', access: { isPrivate: options.isPrivate ?? true } });
      return { userId: customer.userId, client: await signIn(gw, customer), key, assistantId: String(assistant.id) };
    };
    const clientMessage = (chatId: string, text: string) => ({
      id: randomUUID(), site_id: '1', client_id: 'client-1', chat_id: chatId, agents_online: false,
      message: { type: 'TEXT', text, timestamp: Math.floor(gw.clock.now() / 1000) }, event: 'CLIENT_MESSAGE',
    });
    const post = (token: string, body: unknown) =>
      fetch(`${gw.url}/api/bot`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });

    test('create with a webhook URL, the token shown once; the reply to a CLIENT_MESSAGE goes to that URL, and to the new one after PATCH', async () => {
      const me = await owner();
      const first = await chatService();
      const created = await me.client.call<BotView>('POST', '/bots', { name: 'Shop support', assistantId: me.assistantId, webhookUrl: first.url });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.match(created.body.token ?? '', /^tgb-/);
      assert.deepEqual({ name: created.body.name, userId: created.body.userId, orgId: created.body.orgId, webhookUrl: created.body.webhookUrl }, { name: 'Shop support', userId: me.userId, orgId: null, webhookUrl: first.url });
      const listed = await me.client.call<{ object: string; data: BotView[]; next_cursor: string | null }>('GET', '/bots');
      assert.deepEqual(listed.body.data.map((bot) => bot.id), [created.body.id]);
      assert.ok(!JSON.stringify(listed.body).includes(created.body.token!), 'the token is never shown again');
      assert.equal((await me.client.call<BotView>('GET', `/bots/${created.body.id}`)).body.name, 'Shop support');

      const chatId = `chat-${randomUUID()}`;
      assert.equal((await post(created.body.token!, clientMessage(chatId, 'Do you deliver?'))).status, 200);
      await gw.app.services.runner.runDue();
      assert.deepEqual(first.events('BOT_MESSAGE').map((event) => event.chat_id), [chatId], 'the reply reached the URL set through /api/v1/bots');

      const second = await chatService();
      const patched = await me.client.call<BotView>('PATCH', `/bots/${created.body.id}`, { webhookUrl: second.url, name: 'Renamed' });
      assert.deepEqual({ status: patched.status, webhookUrl: patched.body.webhookUrl, name: patched.body.name }, { status: 200, webhookUrl: second.url, name: 'Renamed' });
      assert.equal((await post(created.body.token!, clientMessage(chatId, 'And on Sundays?'))).status, 200);
      await gw.app.services.runner.runDue();
      assert.equal(second.events('BOT_MESSAGE').length, 1);
      assert.equal(first.events('BOT_MESSAGE').length, 1, 'nothing more went to the old URL');
      const actions = (await gw.app.services.audit.list({ actorId: me.userId, limit: 10 })).entries.map((entry) => entry.action);
      assert.deepEqual(actions, ['bot.update', 'bot.create']);
    });

    test('DELETE revokes the token at once: the chat service’s next POST /api/bot is a 401', async () => {
      const me = await owner();
      const created = await me.client.call<BotView>('POST', '/bots', { name: 'Short-lived', assistantId: me.assistantId });
      assert.equal((await post(created.body.token!, clientMessage(randomUUID(), 'hi'))).status, 200);
      const deleted = await me.client.call<BotView & { deleted: boolean }>('DELETE', `/bots/${created.body.id}`);
      assert.deepEqual({ status: deleted.status, deleted: deleted.body.deleted }, { status: 200, deleted: true });
      assert.equal((await post(created.body.token!, clientMessage(randomUUID(), 'still there?'))).status, 401);
      assert.equal((await me.client.call('GET', `/bots/${created.body.id}`)).status, 404);
      assert.equal((await me.client.call('DELETE', `/bots/${created.body.id}`)).status, 404);
      assert.deepEqual((await me.client.call<{ data: BotView[] }>('GET', '/bots')).body.data, []);
      assert.equal((await gw.app.services.audit.list({ targetId: created.body.id, action: 'bot.delete', limit: 5 })).entries.length, 1);
    });

    test('another user’s bot and private assistant answer 404; a public assistant may be used; org bots: members create, owners and admins run them', async () => {
      const me = await owner();
      const other = await owner();
      const theirs = await other.client.call<BotView>('POST', '/bots', { name: 'Theirs', assistantId: other.assistantId });
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Mine' }], ['DELETE', undefined]] as const) {
        assert.equal((await me.client.call(method, `/bots/${theirs.body.id}`, body)).status, 404, method);
      }
      const privateOne = await me.client.call('POST', '/bots', { name: 'Borrowed', assistantId: other.assistantId });
      assert.equal(privateOne.status, 404);
      assert.equal(errorA(privateOne.body).param, 'assistantId');
      const publisher = await owner({ isPrivate: false });
      assert.equal((await me.client.call('POST', '/bots', { name: 'Public', assistantId: publisher.assistantId })).status, 200, 'a public assistant is usable');

      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: other.userId, balance: '5.00' });
      const orgId = org.body.id;
      assert.equal((await me.client.call('POST', '/bots', { name: 'Org bot', assistantId: me.assistantId, orgId })).status, 404, 'not a member of that org');
      await gw.admin('POST', `/orgs/${orgId}/members`, { userId: me.userId, role: 'member' });
      const orgBot = await me.client.call<BotView>('POST', '/bots', { name: 'Org bot', assistantId: me.assistantId, orgId });
      assert.equal(orgBot.status, 200, JSON.stringify(orgBot.body));
      assert.equal(orgBot.body.orgId, orgId);
      const orgList = await other.client.call<{ data: BotView[] }>('GET', `/bots?orgId=${orgId}`);
      assert.deepEqual(orgList.body.data.map((bot) => bot.id), [orgBot.body.id], 'the org owner sees the org’s bots');
      assert.equal((await other.client.call('GET', `/bots/${orgBot.body.id}`)).status, 200);
      const memberList = await me.client.call('GET', `/bots?orgId=${orgId}`);
      assert.equal(memberList.status, 403);
      assert.equal(errorA(memberList.body).type, 'permission_error');
      assert.equal((await publisher.client.call('GET', `/bots?orgId=${orgId}`)).status, 404, 'a stranger to the org');
      const audit = await gw.app.services.audit.list({ orgId, action: 'bot.create', limit: 5 });
      assert.deepEqual(audit.entries.map((entry) => entry.target.id), [orgBot.body.id], 'org bots are audited with the org');

      assert.equal((await other.client.call('DELETE', `/orgs/${orgId}/members/${me.userId}`)).status, 200);
      assert.equal((await post(orgBot.body.token!, clientMessage(randomUUID(), 'hi'))).status, 401, 'a removed member’s bot no longer charges the org');
    });

    test('doors and bad input: CSRF, key scopes, missing fields, a moved org, a refused webhook URL', async () => {
      const me = await owner();
      assert.equal((await me.client.withoutCsrf('POST', '/bots', { name: 'x', assistantId: me.assistantId })).status, 403);
      const wrongScope = await apiClient(gw, me.key)('GET', '/bots');
      assert.equal(wrongScope.status, 403);
      assert.equal(errorA(wrongScope.body).code, 'wrong_key_scope');
      const management = await managementKey(gw, me.userId);
      assert.equal((await management.call('POST', '/bots', { name: 'Scripted', assistantId: me.assistantId })).status, 200);
      for (const body of [{ assistantId: me.assistantId }, { name: 'x' }, { name: '', assistantId: me.assistantId }, { name: 'x', assistantId: me.assistantId, webhookUrl: 5 }]) {
        const bad = await me.client.call('POST', '/bots', body);
        assert.equal(bad.status, 400, JSON.stringify(body));
        assert.equal(errorA(bad.body).type, 'invalid_request_error');
      }
      const created = await me.client.call<BotView>('POST', '/bots', { name: 'x', assistantId: me.assistantId });
      const moved = await me.client.call('PATCH', `/bots/${created.body.id}`, { orgId: 'org_other' });
      assert.equal(moved.status, 400);
      assert.equal(errorA(moved.body).param, 'orgId');
      assert.equal((await me.client.call('GET', '/bots?cursor=%%%')).status, 400);
      assert.equal((await me.client.call('GET', '/bots?limit=1000')).status, 400);

      // The URL guard: a gateway that refuses private addresses refuses them here as the chat service's /api/bot/config does.
      const guarded = await startTestGateway({ database: { url: gw.databaseUrl }, simulator: gw.simulator, config: { allowPrivateUrls: false } });
      try {
        const customer = await createCustomer(guarded);
        const { key } = await guarded.fundedKey({ userId: customer.userId });
        const assistant = await createAssistant(guarded, key, { title: 'Guarded', modelId: 'gpt-4o-mini' });
        const client = await signIn(guarded, customer);
        const refused = await client.call('POST', '/bots', { name: 'x', assistantId: String(assistant.id), webhookUrl: 'http://127.0.0.1:9/hook' });
        assert.equal(refused.status, 400);
        assert.equal(errorA(refused.body).param, 'webhookUrl');
        const bot = await client.call<BotView>('POST', '/bots', { name: 'x', assistantId: String(assistant.id) });
        assert.equal((await client.call('PATCH', `/bots/${bot.body.id}`, { webhookUrl: 'http://10.0.0.1/hook' })).status, 400);
      } finally {
        await guarded.close();
      }
    });
  });
}
