import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn, type SignedInClient } from './helpers/management.ts';
import { postMessages, valuesOfKey } from './helpers/messages-e2e.ts';

interface Member {
  userId: string;
  email: string;
  client: SignedInClient;
}
interface OrgView {
  id: string;
  name: string;
  balance: string;
  promptCaching: boolean;
  role: string;
  members: Array<{ id: string; email: string; name: string; role: string }>;
}

const ephemeral = { type: 'ephemeral' } as const;
/** A prompt with breakpoints in a system block and a message block (the simulator records what reached the vendor). */
const cachedPrompt = {
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  system: [{ type: 'text', text: 'You answer questions about the handbook. '.repeat(40), cache_control: ephemeral }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Here is the handbook. '.repeat(60), cache_control: ephemeral }, { type: 'text', text: 'What matters?' }] }],
};

/** DESIGN §10 /orgs rows: members read the org, owners and admins run it, only owners touch owners, the last owner stays. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`organizations through the management API (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const person = async (name: string): Promise<Member> => {
      const customer = await createCustomer(gw, { name });
      return { userId: customer.userId, email: customer.email, client: await signIn(gw, customer) };
    };
    /** An org with an owner, an admin and a member (made by the operator), and someone outside it. */
    const team = async (): Promise<{ orgId: string; owner: Member; admin: Member; member: Member; outsider: Member }> => {
      const [owner, admin, member, outsider] = [await person('Olive Owner'), await person('Adam Admin'), await person('Mia Member'), await person('Otto Outsider')];
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: owner.userId, balance: '10.00' });
      assert.equal(org.status, 200, JSON.stringify(org.body));
      for (const [who, role] of [[admin, 'admin'], [member, 'member']] as const) {
        assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: who.userId, role })).status, 200);
      }
      return { orgId: org.body.id, owner, admin, member, outsider };
    };
    const roles = (org: OrgView): Record<string, string> => Object.fromEntries(org.members.map((member) => [member.id, member.role]));

    test('a member reads the org with its members; an owner renames it; another user gets 404 as if it did not exist', async () => {
      const { orgId, owner, admin, member, outsider } = await team();
      const read = await member.client.call<OrgView>('GET', `/orgs/${orgId}`);
      assert.equal(read.status, 200, JSON.stringify(read.body));
      assert.deepEqual({ name: read.body.name, balance: read.body.balance, promptCaching: read.body.promptCaching, role: read.body.role }, { name: 'Acme', balance: '10.00', promptCaching: false, role: 'member' });
      assert.deepEqual(roles(read.body), { [owner.userId]: 'owner', [admin.userId]: 'admin', [member.userId]: 'member' });
      assert.deepEqual(read.body.members.find((entry) => entry.id === owner.userId), { id: owner.userId, email: owner.email, name: 'Olive Owner', role: 'owner' });

      const renamed = await owner.client.call<OrgView>('PATCH', `/orgs/${orgId}`, { name: 'Acme Ltd' });
      assert.deepEqual({ status: renamed.status, name: renamed.body.name }, { status: 200, name: 'Acme Ltd' });
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'Mine now' }]] as const) {
        const hidden = await outsider.client.call(method, `/orgs/${orgId}`, body);
        assert.equal(hidden.status, 404, method);
        assert.equal(errorA(hidden.body).type, 'invalid_request_error');
      }
      assert.equal((await outsider.client.call('GET', '/orgs/org_doesnotexist')).status, 404, 'the same answer as an unknown org');
      const audit = await gw.app.services.audit.list({ orgId, action: 'org.update', limit: 10 });
      assert.deepEqual(
        audit.entries.map((entry) => [entry.actor.id, entry.before, entry.after]),
        [[owner.userId, { name: 'Acme', ownerId: owner.userId, promptCaching: false }, { name: 'Acme Ltd', ownerId: owner.userId, promptCaching: false }]],
        'one entry, by the owner',
      );
    });

    test('prompt caching follows the org switch: a member is refused (403), after the owner turns it on the business key keeps cache_control', async () => {
      const { orgId, owner, member } = await team();
      const { key } = await gw.fundedKey({ userId: owner.userId, orgId });
      const forwardedBreakpoints = async (): Promise<number> => {
        const response = await postMessages(gw, cachedPrompt, { key });
        assert.equal(response.status, 200, response.text);
        return valuesOfKey(gw.simulator.lastRequest('/v1/messages')?.json, 'cache_control').length;
      };
      assert.equal(await forwardedBreakpoints(), 0, 'off by default: every cache_control is stripped');

      const refused = await member.client.call('PATCH', `/orgs/${orgId}`, { promptCaching: true });
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).type, 'permission_error');
      assert.equal(await forwardedBreakpoints(), 0, 'still off after the refused change');

      const turnedOn = await owner.client.call<OrgView>('PATCH', `/orgs/${orgId}`, { promptCaching: true });
      assert.deepEqual({ status: turnedOn.status, promptCaching: turnedOn.body.promptCaching }, { status: 200, promptCaching: true });
      assert.equal(await forwardedBreakpoints(), 2, 'both breakpoints reach the vendor once the owner switched caching on');
      const audit = await gw.app.services.audit.list({ orgId, action: 'org.update', limit: 10 });
      assert.deepEqual(audit.entries[0]?.after, { name: 'Acme', ownerId: owner.userId, promptCaching: true });
    });

    test('doors: no CSRF header → 403, an inference key → 403, the owner’s management key works; bad input → 400 in shape A', async () => {
      const { orgId, owner } = await team();
      const refused = await owner.client.withoutCsrf('PATCH', `/orgs/${orgId}`, { promptCaching: true });
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).code, 'csrf_failed');
      const { key: inferenceKey } = await gw.fundedKey({ userId: owner.userId, orgId });
      const wrongScope = await apiClient(gw, inferenceKey)('GET', `/orgs/${orgId}`);
      assert.equal(wrongScope.status, 403);
      assert.equal(errorA(wrongScope.body).code, 'wrong_key_scope');
      const management = await managementKey(gw, owner.userId);
      const viaKey = await management.call<OrgView>('PATCH', `/orgs/${orgId}`, { name: 'Scripted' });
      assert.deepEqual({ status: viaKey.status, name: viaKey.body.name }, { status: 200, name: 'Scripted' });
      assert.equal((await owner.client.call<OrgView>('GET', `/orgs/${orgId}`)).body.promptCaching, false, 'the CSRF-less change did not happen');

      for (const body of [{ promptCaching: 'yes' }, { name: '' }, { name: 'x'.repeat(201) }]) {
        const bad = await owner.client.call('PATCH', `/orgs/${orgId}`, body);
        assert.equal(bad.status, 400, JSON.stringify(body));
        assert.equal(errorA(bad.body).type, 'invalid_request_error');
        assert.equal(errorA(bad.body).param, Object.keys(body)[0]);
      }
      assert.equal((await owner.client.call('PATCH', `/orgs/${orgId}/members/${owner.userId}`, { role: 'boss' })).status, 400);
      assert.equal((await owner.client.call('POST', '/orgs', {})).status, 400);
    });

    test('a user starts an org of their own and owns it; it shows in /me and /orgs with no balance', async () => {
      const founder = await person('Fay Founder');
      const created = await founder.client.call<OrgView>('POST', '/orgs', { name: 'Side project' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.deepEqual({ role: created.body.role, balance: created.body.balance, members: roles(created.body) }, { role: 'owner', balance: '0.00', members: { [founder.userId]: 'owner' } });
      const me = await founder.client.call<{ orgs: Array<{ id: string; role: string }> }>('GET', '/me');
      assert.deepEqual(me.body.orgs.map((org) => [org.id, org.role]), [[created.body.id, 'owner']]);
      const list = await founder.client.call<{ object: string; data: Array<{ id: string }> }>('GET', '/orgs');
      assert.deepEqual({ object: list.body.object, ids: list.body.data.map((org) => org.id) }, { object: 'list', ids: [created.body.id] });
    });

    test('members: admins manage members, only an owner touches owners, a member cannot manage, strangers get 404', async () => {
      const { orgId, owner, admin, member, outsider } = await team();
      const promoted = await admin.client.call('PATCH', `/orgs/${orgId}/members/${member.userId}`, { role: 'admin' });
      assert.deepEqual({ status: promoted.status, body: promoted.body }, { status: 200, body: { id: member.userId, email: member.email, name: 'Mia Member', role: 'admin' } });
      assert.equal((await admin.client.call('PATCH', `/orgs/${orgId}/members/${member.userId}`, { role: 'member' })).status, 200);

      for (const [target, role] of [[member.userId, 'owner'], [owner.userId, 'member']] as const) {
        const refused = await admin.client.call('PATCH', `/orgs/${orgId}/members/${target}`, { role });
        assert.equal(refused.status, 403, `admin sets ${target} to ${role}`);
        assert.equal(errorA(refused.body).type, 'permission_error');
      }
      assert.equal((await admin.client.call('DELETE', `/orgs/${orgId}/members/${owner.userId}`)).status, 403, 'an admin cannot remove an owner');
      const memberTries = await member.client.call('PATCH', `/orgs/${orgId}/members/${admin.userId}`, { role: 'member' });
      assert.equal(memberTries.status, 403);
      assert.equal((await member.client.call('DELETE', `/orgs/${orgId}/members/${admin.userId}`)).status, 403);
      assert.equal((await outsider.client.call('PATCH', `/orgs/${orgId}/members/${member.userId}`, { role: 'admin' })).status, 404);
      assert.equal((await owner.client.call('PATCH', `/orgs/${orgId}/members/${outsider.userId}`, { role: 'admin' })).status, 404, 'not a member');

      const made = await owner.client.call('PATCH', `/orgs/${orgId}/members/${admin.userId}`, { role: 'owner' });
      assert.equal(made.status, 200);
      const removed = await admin.client.call<{ id: string; role: string; deleted: boolean }>('DELETE', `/orgs/${orgId}/members/${member.userId}`);
      assert.deepEqual({ status: removed.status, id: removed.body.id, role: removed.body.role, deleted: removed.body.deleted }, { status: 200, id: member.userId, role: 'member', deleted: true });
      assert.equal((await member.client.call('GET', `/orgs/${orgId}`)).status, 404, 'a removed member no longer sees the org');
      // The members' own changes; the admin's set-up of the team (two member.update by the admin) is audited too.
      const entries = (await gw.app.services.audit.list({ orgId, limit: 20 })).entries.filter((entry) => entry.actor.type === 'user');
      assert.deepEqual(entries.map((entry) => entry.action).filter((action) => action.startsWith('member.')), ['member.remove', 'member.update', 'member.update', 'member.update']);
    });

    test('the last owner can neither leave nor be demoted (409); with a second owner they can; a member may leave', async () => {
      const { orgId, owner, admin, member } = await team();
      for (const [method, body] of [['PATCH', { role: 'admin' }], ['DELETE', undefined]] as const) {
        const refused = await owner.client.call(method, `/orgs/${orgId}/members/${owner.userId}`, body);
        assert.equal(refused.status, 409, method);
        assert.equal(errorA(refused.body).code, 'last_owner');
      }
      assert.equal((await member.client.call('DELETE', `/orgs/${orgId}/members/${member.userId}`)).status, 200, 'a member leaves');
      assert.equal((await owner.client.call('PATCH', `/orgs/${orgId}/members/${admin.userId}`, { role: 'owner' })).status, 200);
      assert.equal((await owner.client.call('DELETE', `/orgs/${orgId}/members/${owner.userId}`)).status, 200, 'with another owner the first may leave');
      const read = await admin.client.call<OrgView>('GET', `/orgs/${orgId}`);
      assert.deepEqual(roles(read.body), { [admin.userId]: 'owner' });
    });

    test('two owners demoting each other at the same time leave one owner, never none', async () => {
      const { orgId, owner, admin } = await team();
      assert.equal((await owner.client.call('PATCH', `/orgs/${orgId}/members/${admin.userId}`, { role: 'owner' })).status, 200);
      const [first, second] = await Promise.all([
        owner.client.call('PATCH', `/orgs/${orgId}/members/${admin.userId}`, { role: 'admin' }),
        admin.client.call('PATCH', `/orgs/${orgId}/members/${owner.userId}`, { role: 'admin' }),
      ]);
      const statuses = [first.status, second.status].sort();
      assert.equal(statuses[0], 200, JSON.stringify([first.body, second.body]));
      assert.ok(statuses[1] === 409 || statuses[1] === 403, `the other is refused: last owner (409), or no longer an owner (403): ${statuses[1]}`);
      const members = (await gw.app.services.orgs.details(owner.userId, orgId).catch(() => gw.app.services.orgs.details(admin.userId, orgId))).members;
      assert.equal(members.filter((entry) => entry.role === 'owner').length, 1);
    });
  });
}
