import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createAssistant, newMention } from './helpers/assistants-e2e.ts';
import { errorA } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { jsonClient } from './helpers/json-client.ts';
import { advanceAndRun, postOk } from './helpers/tasks.ts';
import { startWebhookReceiver, type WebhookReceiver } from './helpers/webhook-receiver.ts';

interface Page<T> {
  object: string;
  data: T[];
  next_cursor: string | null;
}
interface AuditRow {
  action: string;
  actor: { type: string; id: string | null; ip: string | null };
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  orgId: string | null;
}
interface BotView {
  id: string;
  object: string;
  name: string | null;
  userId: string;
  orgId: string | null;
  assistantId: string;
  webhookUrl: string | null;
  token?: string;
}
interface DeliveryView {
  id: string;
  attempt: number;
  status: string;
  httpStatus: number | null;
}

/** An admin answer that is an error in shape A with this status. */
function expectShapeA(response: { status: number; body: unknown }, status: number, what: string): { message: string; type: string; param: string | null; code: string | null } {
  assert.equal(response.status, status, `${what}: ${JSON.stringify(response.body)}`);
  const error = errorA(response.body);
  assert.equal(typeof error.message, 'string', what);
  assert.ok(error.message.length > 0, what);
  return error as { message: string; type: string; param: string | null; code: string | null };
}

/** DESIGN §4: bots, providers, models, members and deliveries have their list/get/update/delete (where it makes sense), audited. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`admin resources: bots, providers, models, members, deliveries (${database})`, () => {
    let gw: TestGateway;
    const receivers: WebhookReceiver[] = [];
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
      await gw?.close();
    });

    const auditOf = async (targetId: string, action: string): Promise<AuditRow[]> => {
      const page = await gw.admin<Page<AuditRow>>('GET', `/audit?targetId=${encodeURIComponent(targetId)}&action=${action}`);
      assert.equal(page.status, 200);
      return page.body.data;
    };
    /** A user with a key and a private assistant of their own. */
    const userWithAssistant = async (): Promise<{ userId: string; key: string; assistantId: string }> => {
      const { key, userId } = await gw.fundedKey({ balance: '5.00' });
      const assistant = await createAssistant(gw, key, { mention: newMention('adm'), title: 'Help desk', instruction: 'Be brief.', modelId: 'gpt-4o-mini', access: { isPrivate: true } });
      return { userId, key, assistantId: String(assistant.id) };
    };
    const botEvent = (token: string) =>
      fetch(`${gw.url}/api/bot`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ id: randomUUID(), client_id: 'c1', chat_id: `chat-${randomUUID()}`, event: 'CLIENT_MESSAGE', message: { type: 'TEXT', text: 'hello' } }),
      });

    test('bots: create (audited), list with query/userId/orgId and cursors, get; never the token again', async () => {
      const alice = await userWithAssistant();
      const bob = await userWithAssistant();
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Bot org', ownerId: bob.userId, balance: '1.00' });
      const tag = `Marlin ${randomUUID().slice(0, 6)}`;
      const made: BotView[] = [];
      for (let index = 0; index < 3; index += 1) {
        const created = await gw.admin<BotView>('POST', '/bots', { userId: alice.userId, assistantId: alice.assistantId, name: `${tag} ${index}` });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        assert.match(created.body.token ?? '', /^tgb-/);
        made.push(created.body);
      }
      const orgBot = await gw.admin<BotView>('POST', '/bots', { userId: bob.userId, orgId: org.body.id, assistantId: bob.assistantId, name: `${tag} org` });
      assert.equal(orgBot.status, 200, JSON.stringify(orgBot.body));

      const createdAudit = await auditOf(made[0]!.id, 'bot.create');
      assert.equal(createdAudit.length, 1, 'admin bot creation is audited');
      assert.deepEqual([createdAudit[0]!.actor.type, createdAudit[0]!.actor.ip], ['admin', '127.0.0.1']);
      assert.equal(createdAudit[0]!.after?.name, `${tag} 0`);
      assert.equal((await auditOf(orgBot.body.id, 'bot.create'))[0]?.orgId, org.body.id);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; body: Page<BotView> } = await gw.admin('GET', `/bots?query=${encodeURIComponent(tag)}&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.equal(page.body.object, 'list');
        assert.ok(!JSON.stringify(page.body).includes('tgb-'), 'lists never show a token');
        seen.push(...page.body.data.map((bot) => bot.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual([...seen].sort(), [...made.map((bot) => bot.id), orgBot.body.id].sort());
      assert.equal(new Set(seen).size, 4);

      const byUser = await gw.admin<Page<BotView>>('GET', `/bots?userId=${alice.userId}`);
      assert.deepEqual(byUser.body.data.map((bot) => bot.id).sort(), made.map((bot) => bot.id).sort());
      const byOrg = await gw.admin<Page<BotView>>('GET', `/bots?orgId=${org.body.id}`);
      assert.deepEqual(byOrg.body.data.map((bot) => bot.id), [orgBot.body.id]);

      const shown = await gw.admin<BotView>('GET', `/bots/${made[1]!.id}`);
      assert.deepEqual(
        { status: shown.status, name: shown.body.name, userId: shown.body.userId, assistantId: shown.body.assistantId, token: shown.body.token },
        { status: 200, name: `${tag} 1`, userId: alice.userId, assistantId: alice.assistantId, token: undefined },
      );
      expectShapeA(await gw.admin('GET', '/bots/bot_nope'), 404, 'unknown bot');
      expectShapeA(await gw.admin('GET', '/bots?cursor=bogus'), 400, 'a cursor we did not make');
      expectShapeA(await gw.admin('GET', '/bots?limit=1000'), 400, 'limit beyond 100');
    });

    test('bots: PATCH name, webhook URL and assistant under the owner’s rules, audited before → after; bad input 400, unknown 404', async () => {
      const alice = await userWithAssistant();
      const bob = await userWithAssistant();
      const bot = await gw.admin<BotView>('POST', '/bots', { userId: alice.userId, assistantId: alice.assistantId, name: 'Before' });
      const second = await createAssistant(gw, alice.key, { mention: newMention('adm2'), title: 'Second', modelId: 'gpt-4o-mini', access: { isPrivate: true } });

      const patched = await gw.admin<BotView>('PATCH', `/bots/${bot.body.id}`, { name: 'After', webhookUrl: 'https://chat.example.com/hook', assistantId: String(second.id) });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual({ name: patched.body.name, webhookUrl: patched.body.webhookUrl, assistantId: patched.body.assistantId }, { name: 'After', webhookUrl: 'https://chat.example.com/hook', assistantId: String(second.id) });
      assert.equal((await gw.admin<BotView>('GET', `/bots/${bot.body.id}`)).body.name, 'After');
      const [update] = await auditOf(bot.body.id, 'bot.update');
      assert.ok(update, 'the change is audited');
      assert.equal(update.actor.type, 'admin');
      assert.deepEqual([update.before?.name, update.after?.name], ['Before', 'After']);
      assert.deepEqual([update.before?.webhookUrl, update.after?.webhookUrl], [null, 'https://chat.example.com/hook']);
      assert.equal((await gw.admin<BotView>('PATCH', `/bots/${bot.body.id}`, { webhookUrl: null })).body.webhookUrl, null, 'null clears the URL');

      const borrowed = expectShapeA(await gw.admin('PATCH', `/bots/${bot.body.id}`, { assistantId: bob.assistantId }), 404, 'another user’s private assistant');
      assert.equal(borrowed.param, 'assistantId');
      for (const [body, param] of [
        [{ name: '' }, 'name'],
        [{ name: 5 }, 'name'],
        [{ webhookUrl: 'ftp://chat.example.com/hook' }, 'webhookUrl'],
        [{ webhookUrl: 'not a url' }, 'webhookUrl'],
        [{ orgId: 'org_other' }, 'orgId'],
        [{ userId: bob.userId }, 'userId'],
      ] as const) {
        const error = expectShapeA(await gw.admin('PATCH', `/bots/${bot.body.id}`, body), 400, JSON.stringify(body));
        assert.equal(error.type, 'invalid_request_error');
        assert.equal(error.param, param, JSON.stringify(body));
      }
      assert.equal((await gw.admin<BotView>('GET', `/bots/${bot.body.id}`)).body.name, 'After', 'refused changes change nothing');
      expectShapeA(await gw.admin('PATCH', '/bots/bot_nope', { name: 'x' }), 404, 'unknown bot');
      expectShapeA(await gw.admin('POST', '/bots', { userId: alice.userId }), 400, 'create without an assistant');
    });

    test('bots: PATCH refuses a private webhook address on a gateway that guards outbound URLs', async () => {
      const guarded = await startTestGateway({ simulator: gw.simulator, config: { allowPrivateUrls: false } });
      try {
        const { key, userId } = await guarded.fundedKey({ balance: '5.00' });
        const assistant = await createAssistant(guarded, key, { title: 'Guarded', modelId: 'gpt-4o-mini' });
        const bot = await guarded.admin<BotView>('POST', '/bots', { userId, assistantId: String(assistant.id) });
        assert.equal(bot.status, 200, JSON.stringify(bot.body));
        for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.1/hook']) {
          const error = expectShapeA(await guarded.admin('PATCH', `/bots/${bot.body.id}`, { webhookUrl: url }), 400, url);
          assert.equal(error.param, 'webhookUrl');
        }
      } finally {
        await guarded.close();
      }
    });

    test('bots: DELETE revokes the token at once (the next /api/bot call is a 401), audited; then 404', async () => {
      const alice = await userWithAssistant();
      const bot = await gw.admin<BotView>('POST', '/bots', { userId: alice.userId, assistantId: alice.assistantId, name: 'Doomed' });
      assert.equal((await botEvent(bot.body.token!)).status, 200, 'the token works before');
      const deleted = await gw.admin<BotView & { deleted: boolean }>('DELETE', `/bots/${bot.body.id}`);
      assert.deepEqual({ status: deleted.status, id: deleted.body.id, deleted: deleted.body.deleted }, { status: 200, id: bot.body.id, deleted: true });
      assert.equal((await botEvent(bot.body.token!)).status, 401, 'the token stops working at once');
      expectShapeA(await gw.admin('GET', `/bots/${bot.body.id}`), 404, 'a deleted bot');
      expectShapeA(await gw.admin('DELETE', `/bots/${bot.body.id}`), 404, 'deleted twice');
      assert.deepEqual((await gw.admin<Page<BotView>>('GET', `/bots?userId=${alice.userId}`)).body.data, []);
      const [entry] = await auditOf(bot.body.id, 'bot.delete');
      assert.deepEqual([entry?.actor.type, entry?.before?.name, entry?.after], ['admin', 'Doomed', null]);
    });

    test('providers: PATCH keeps what it does not name, never shows the key; DELETE is refused (409) while a model routes to it', async () => {
      const id = `spare-${randomUUID().slice(0, 6)}`;
      const put = await gw.admin('PUT', `/providers/${id}`, { type: 'openai', baseUrl: gw.simulator.url + '/v1', apiKey: 'sk-secret-provider-key' });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const patched = await gw.admin<{ baseUrl: string; hasApiKey: boolean; type: string; channels: Array<Record<string, unknown>> }>('PATCH', `/providers/${id}`, { baseUrl: 'https://vendor.example.com/v1' });
      const { channels, ...top } = patched.body;
      assert.deepEqual({ status: patched.status, ...top }, { status: 200, id, type: 'openai', baseUrl: 'https://vendor.example.com/v1', hasApiKey: true });
      assert.deepEqual(channels.map(({ health: _health, ...channel }) => channel), [{ id: 'default', baseUrl: 'https://vendor.example.com/v1', hasApiKey: true, weight: 1, priority: 0, models: null }]);
      assert.equal((await gw.admin<{ hasApiKey: boolean }>('PATCH', `/providers/${id}`, { apiKey: null })).body.hasApiKey, false);
      const [update] = await auditOf(id, 'provider.update');
      const channel = { id: 'default', baseUrl: 'https://vendor.example.com/v1', weight: 1, priority: 0, models: null };
      assert.deepEqual(update?.before, { type: 'openai', channels: [{ ...channel, hasApiKey: true }] });
      assert.deepEqual(update?.after, { type: 'openai', channels: [{ ...channel, hasApiKey: false }] });
      expectShapeA(await gw.admin('PATCH', `/providers/${id}`, { baseUrl: 'not a url' }), 400, 'bad baseUrl');
      expectShapeA(await gw.admin('PATCH', `/providers/${id}`, { type: 'gemini' }), 400, 'bad type');
      expectShapeA(await gw.admin('PATCH', `/providers/${id}`, {}), 400, 'nothing to change');
      expectShapeA(await gw.admin('PATCH', '/providers/no-such-provider', { baseUrl: 'https://x.example.com' }), 404, 'unknown provider');

      const model = `routed-${randomUUID().slice(0, 6)}`;
      assert.equal((await gw.admin('PUT', `/models/${model}`, { kind: 'chat', provider: id, upstreamModel: 'gpt-4o-mini', cost_context: '1', cost_completion: '2' })).status, 200);
      const refused = expectShapeA(await gw.admin('DELETE', `/providers/${id}`), 409, 'provider in use');
      assert.equal(refused.code, 'provider_in_use');
      assert.match(refused.message, new RegExp(model));
      assert.equal((await gw.admin('GET', `/providers/${id}`)).status, 200, 'still there');

      assert.equal((await gw.admin('PATCH', `/models/${model}`, { provider: 'openai' })).status, 200);
      const deleted = await gw.admin<{ id: string; deleted: boolean; apiKey?: string }>('DELETE', `/providers/${id}`);
      assert.deepEqual({ status: deleted.status, id: deleted.body.id, deleted: deleted.body.deleted, apiKey: deleted.body.apiKey }, { status: 200, id, deleted: true, apiKey: undefined });
      expectShapeA(await gw.admin('GET', `/providers/${id}`), 404, 'deleted provider');
      expectShapeA(await gw.admin('DELETE', `/providers/${id}`), 404, 'deleted twice');
      assert.ok(!(await gw.admin<Page<{ id: string }>>('GET', '/providers')).body.data.some((provider) => provider.id === id));
      const [entry] = await auditOf(id, 'provider.delete');
      assert.deepEqual([entry?.actor.type, entry?.before, entry?.after], ['admin', { type: 'openai', channels: [{ ...channel, hasApiKey: false }] }, null]);
      assert.ok(!JSON.stringify(await auditOf(id, 'provider.put')).includes('sk-secret-provider-key'), 'the key never reaches the audit log');
    });

    test('models: DELETE takes a model out of /v1/models and answers 404 for it; refused (409) while another model redirects to it', async () => {
      const { key } = await gw.fundedKey({ balance: '5.00' });
      const target = `house-${randomUUID().slice(0, 6)}`;
      const retired = `old-${randomUUID().slice(0, 6)}`;
      for (const id of [target, retired]) {
        assert.equal((await gw.admin('PUT', `/models/${id}`, { kind: 'chat', provider: 'openai', upstreamModel: 'gpt-4o-mini', cost_context: '1', cost_completion: '2' })).status, 200);
      }
      assert.equal((await gw.admin('PATCH', `/models/${retired}`, { deprecated_at: '2020-01-01', deprecation_redirect_to: target })).status, 200);
      const refused = expectShapeA(await gw.admin('DELETE', `/models/${target}`), 409, 'model in use as an analogue');
      assert.equal(refused.code, 'model_in_use');
      assert.match(refused.message, new RegExp(retired));

      assert.equal((await gw.admin('PATCH', `/models/${retired}`, { deprecation_redirect_to: null })).status, 200);
      const deleted = await gw.admin('DELETE', `/models/${target}`);
      assert.deepEqual(deleted, { status: 200, body: { id: target, object: 'model', deleted: true } });
      expectShapeA(await gw.admin('GET', `/models/${target}`), 404, 'deleted model');
      expectShapeA(await gw.admin('DELETE', `/models/${target}`), 404, 'deleted twice');
      const listed = (await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> };
      assert.ok(!listed.data.some((model) => model.id === target), '/v1/models no longer lists it');
      const call = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: target, messages: [{ role: 'user', content: 'hi' }] }) });
      assert.equal(call.status, 404);
      const [entry] = await auditOf(target, 'model.delete');
      assert.deepEqual([entry?.actor.type, entry?.before?.id, entry?.before?.cost_context, entry?.after], ['admin', target, '1', null]);
    });

    test('members: PATCH role and DELETE keep the last owner (409) as the owners’ door does; a removed member’s business key stops', async () => {
      const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'Sole owner' });
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Members org', ownerId: owner.body.id, balance: '3.00' });
      const { key, userId: member } = await gw.fundedKey({ balance: '1.00' });
      assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member, role: 'member' })).status, 200);
      const { key: businessKey } = await gw.fundedKey({ userId: member, orgId: org.body.id });

      const promoted = await gw.admin<{ userId: string; role: string }>('PATCH', `/orgs/${org.body.id}/members/${member}`, { role: 'admin' });
      assert.deepEqual({ status: promoted.status, userId: promoted.body.userId, role: promoted.body.role }, { status: 200, userId: member, role: 'admin' });
      const [update] = await auditOf(member, 'member.update').then((rows) => rows.filter((row) => row.after?.role === 'admin'));
      assert.deepEqual([update?.actor.type, update?.before, update?.after, update?.orgId], ['admin', { role: 'member' }, { role: 'admin' }, org.body.id]);

      const demote = expectShapeA(await gw.admin('PATCH', `/orgs/${org.body.id}/members/${owner.body.id}`, { role: 'member' }), 409, 'demoting the last owner');
      assert.equal(demote.code, 'last_owner');
      assert.equal(expectShapeA(await gw.admin('DELETE', `/orgs/${org.body.id}/members/${owner.body.id}`), 409, 'removing the last owner').code, 'last_owner');
      expectShapeA(await gw.admin('PATCH', `/orgs/${org.body.id}/members/${member}`, { role: 'boss' }), 400, 'unknown role');
      expectShapeA(await gw.admin('PATCH', `/orgs/${org.body.id}/members/${member}`, {}), 400, 'no role');
      expectShapeA(await gw.admin('PATCH', `/orgs/${org.body.id}/members/usr_nope`, { role: 'admin' }), 404, 'not a member');
      expectShapeA(await gw.admin('PATCH', `/orgs/org_nope/members/${member}`, { role: 'admin' }), 404, 'unknown org');
      expectShapeA(await gw.admin('DELETE', `/orgs/org_nope/members/${member}`), 404, 'unknown org');

      // With a second owner, the first may step down.
      assert.equal((await gw.admin('PATCH', `/orgs/${org.body.id}/members/${member}`, { role: 'owner' })).status, 200);
      assert.equal((await gw.admin<{ role: string }>('PATCH', `/orgs/${org.body.id}/members/${owner.body.id}`, { role: 'member' })).body.role, 'member');
      assert.equal((await gw.admin('PATCH', `/orgs/${org.body.id}/members/${owner.body.id}`, { role: 'owner' })).status, 200);

      const business = () => fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${businessKey}` } });
      assert.equal((await business()).status, 200);
      const removed = await gw.admin<{ userId: string; role: string; deleted: boolean }>('DELETE', `/orgs/${org.body.id}/members/${member}`);
      assert.deepEqual({ status: removed.status, userId: removed.body.userId, role: removed.body.role, deleted: removed.body.deleted }, { status: 200, userId: member, role: 'owner', deleted: true });
      assert.equal((await business()).status, 401, 'a removed member’s key no longer charges the org');
      assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status, 200, 'their personal key still works');
      const members = await gw.admin<Page<{ userId: string }>>('GET', `/orgs/${org.body.id}/members`);
      assert.deepEqual(members.body.data.map((row) => row.userId), [owner.body.id]);
      expectShapeA(await gw.admin('DELETE', `/orgs/${org.body.id}/members/${member}`), 404, 'removed twice');
      const [entry] = await auditOf(member, 'member.remove');
      assert.deepEqual([entry?.actor.type, entry?.before, entry?.after, entry?.orgId], ['admin', { role: 'owner' }, null, org.body.id]);
    });

    test('deliveries: a webhook that failed for good is retried on the operator’s word, signed afresh; 409 while queued or once delivered', async () => {
      const { key } = await gw.fundedKey({ balance: '20.00' });
      let answer = 503;
      const receiver = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => answer });
      receivers.push(receiver);
      const created = await postOk(gw, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'deliver me', webhook_url: receiver.url });
      const taskId = String(created.body.id);
      const list = async (): Promise<DeliveryView[]> => {
        const page = await gw.admin<Page<DeliveryView>>('GET', `/deliveries?taskId=${taskId}`);
        assert.equal(page.status, 200);
        return page.body.data;
      };
      await gw.app.services.runner.runDue();
      const first = (await list())[0]!;
      const queued = expectShapeA(await gw.admin('POST', `/deliveries/${first.id}/retry`), 409, 'automatic retries still pending');
      assert.equal(queued.code, 'delivery_queued');
      for (const pause of [5_000, 20_000, 60_000, 180_000]) await advanceAndRun(gw, pause);
      assert.equal(receiver.received.length, 5);
      const failed = await list();
      assert.deepEqual(failed.map((row) => [row.attempt, row.status]), [1, 2, 3, 4, 5].map((attempt) => [attempt, 'failed']));
      assert.equal(await advanceAndRun(gw, 3_600_000), 0, 'nothing more on its own');

      answer = 200;
      const last = failed[failed.length - 1]!;
      const retried = await gw.admin<{ id: string; taskId: string; queued: boolean }>('POST', `/deliveries/${last.id}/retry`);
      assert.deepEqual({ status: retried.status, id: retried.body.id, taskId: retried.body.taskId, queued: retried.body.queued }, { status: 200, id: last.id, taskId, queued: true });
      assert.equal(expectShapeA(await gw.admin('POST', `/deliveries/${last.id}/retry`), 409, 'a second retry before the first ran').code, 'delivery_queued');
      await gw.app.services.runner.runDue();
      assert.equal(receiver.received.length, 6);
      const delivered = receiver.received[5]!;
      assert.ok(delivered.verified, 'signed with the creating key');
      assert.equal(delivered.headers['x-tollgate-delivery'], taskId);
      assert.notEqual(delivered.headers['x-tollgate-signature'], receiver.received[4]!.headers['x-tollgate-signature'], 'a fresh signature');
      assert.deepEqual((await list()).map((row) => [row.attempt, row.status]).slice(-2), [[5, 'failed'], [6, 'delivered']]);

      assert.equal(expectShapeA(await gw.admin('POST', `/deliveries/${last.id}/retry`), 409, 'already delivered').code, 'already_delivered');
      expectShapeA(await gw.admin('POST', '/deliveries/dlv_nope/retry'), 404, 'unknown delivery');
      expectShapeA(await gw.admin('GET', '/deliveries/dlv_nope'), 404, 'unknown delivery');
      assert.equal((await gw.admin<DeliveryView>('GET', `/deliveries/${last.id}`)).body.attempt, 5);
      const [entry] = await auditOf(last.id, 'delivery.retry');
      assert.deepEqual([entry?.actor.type, entry?.before?.taskId, entry?.before?.status, entry?.after?.status], ['admin', taskId, 'failed', 'queued']);
    });

    test('deliveries: a receiver that answered 410 Gone is not retried (409): the signing key was erased', async () => {
      const { key } = await gw.fundedKey({ balance: '20.00' });
      const receiver = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => 410 });
      receivers.push(receiver);
      const created = await postOk(gw, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'gone', webhook_url: receiver.url });
      await gw.app.services.runner.runDue();
      const page = await gw.admin<Page<DeliveryView>>('GET', `/deliveries?taskId=${String(created.body.id)}`);
      assert.deepEqual(page.body.data.map((row) => [row.status, row.httpStatus]), [['failed', 410]]);
      const refused = expectShapeA(await gw.admin('POST', `/deliveries/${page.body.data[0]!.id}/retry`), 409, 'receiver gone');
      assert.equal(refused.code, 'delivery_not_retryable');
      await advanceAndRun(gw, 3_600_000);
      assert.equal(receiver.received.length, 1);
    });

    test('every new admin route needs the admin token (401)', async () => {
      const withoutToken = async (method: string, path: string, body?: unknown) => {
        const response = await fetch(`${gw.url}/admin/v1${path}`, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
        return { status: response.status, body: (await response.json()) as unknown };
      };
      for (const client of [jsonClient(`${gw.url}/admin/v1`, 'not-the-token'), withoutToken]) {
        for (const [method, path, body] of [
          ['GET', '/bots', undefined],
          ['GET', '/bots/bot_x', undefined],
          ['PATCH', '/bots/bot_x', { name: 'x' }],
          ['DELETE', '/bots/bot_x', undefined],
          ['PATCH', '/providers/openai', { baseUrl: 'https://x.example.com' }],
          ['DELETE', '/providers/openai', undefined],
          ['DELETE', '/models/gpt-4o-mini', undefined],
          ['PATCH', '/orgs/org_x/members/usr_x', { role: 'member' }],
          ['DELETE', '/orgs/org_x/members/usr_x', undefined],
          ['GET', '/deliveries/dlv_x', undefined],
          ['POST', '/deliveries/dlv_x/retry', undefined],
        ] as const) {
          // Wrong tokens are limited per client and minute (429 after ten): each call gets a fresh window.
          gw.clock.advance(61_000);
          const response = await client(method, path, body);
          assert.equal(response.status, 401, `${method} ${path}`);
          assert.ok(errorA(response.body).message, `${method} ${path}: shape A`);
        }
      }
      assert.equal((await gw.admin('GET', '/models/gpt-4o-mini')).status, 200, 'nothing was deleted');
    });
  });
}
