import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { jsonClient } from './helpers/json-client.ts';
import { apiClient, createCustomer, signIn } from './helpers/management.ts';

interface Page<T> {
  object: string;
  data: T[];
  next_cursor: string | null;
}
interface AuditRow {
  id: string;
  action: string;
  actor: { type: string; id: string | null; ip: string | null };
  target: { type: string; id: string | null };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  orgId: string | null;
}

/** DESIGN §4: every resource has list, get, update and delete where it makes sense; every admin action is audited. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`admin users, orgs and audit (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    /** Follows next_cursor to the end; every item must appear once. */
    const walk = async <T extends { id: string }>(path: string): Promise<string[]> => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const separator = path.includes('?') ? '&' : '?';
        const page: { status: number; body: Page<T> } = await gw.admin('GET', `${path}${separator}limit=2${cursor ? `&cursor=${cursor}` : ''}`);
        assert.equal(page.status, 200, JSON.stringify(page.body));
        assert.equal(page.body.object, 'list');
        seen.push(...page.body.data.map((item) => item.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      return seen;
    };

    test('users: list with query and cursors, get, PATCH name/email/password/operator, and the new password signs in', async () => {
      const made: string[] = [];
      for (let index = 0; index < 5; index += 1) made.push((await gw.admin<{ id: string }>('POST', '/users', { name: `Zephyrine ${index}` })).body.id);
      const seen = await walk('/users?query=zephyrine');
      assert.deepEqual([...seen].sort(), [...made].sort());
      assert.equal(new Set(seen).size, 5);

      const patched = await gw.admin<{ name: string; email: string; operator: boolean }>('PATCH', `/users/${made[0]}`, { name: 'Renamed', email: 'Renamed@Example.com', password: 'a-long-password', operator: true });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.deepEqual({ name: patched.body.name, email: patched.body.email, operator: patched.body.operator }, { name: 'Renamed', email: 'renamed@example.com', operator: true });
      const login = await fetch(`${gw.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'renamed@example.com', password: 'a-long-password' }) });
      assert.equal(login.status, 200);
      const shown = await gw.admin<{ name: string; balance: string }>('GET', `/users/${made[0]}`);
      assert.deepEqual({ status: shown.status, name: shown.body.name, balance: shown.body.balance }, { status: 200, name: 'Renamed', balance: '0.00' });

      assert.equal((await gw.admin('PATCH', `/users/${made[1]}`, { email: 'RENAMED@example.com' })).status, 409, 'an email belongs to one user');
      assert.equal((await gw.admin('PATCH', `/users/${made[1]}`, { password: 'short' })).status, 400);
      assert.equal((await gw.admin('PATCH', `/users/${made[1]}`, { password: 'long-enough-but-no-email' })).status, 400);
      assert.equal((await gw.admin('PATCH', `/users/${made[1]}`, { operator: 'yes' })).status, 400);
      assert.equal((await gw.admin('PATCH', '/users/usr_nope', { name: 'x' })).status, 404);
      assert.equal((await gw.admin('GET', '/users/usr_nope')).status, 404);
      assert.equal((await gw.admin('GET', '/users?cursor=bogus')).status, 400);
      assert.equal((await gw.admin('GET', '/users?limit=500')).status, 400);
    });

    test('delete: an account without history goes; one with money or history answers 409 and stays', async () => {
      const empty = await gw.admin<{ id: string }>('POST', '/users', { name: 'never used' });
      assert.deepEqual(await gw.admin('DELETE', `/users/${empty.body.id}`), { status: 200, body: { ok: true } });
      assert.equal((await gw.admin('GET', `/users/${empty.body.id}`)).status, 404);
      assert.equal((await gw.admin('DELETE', `/users/${empty.body.id}`)).status, 404);

      const funded = await gw.admin<{ id: string }>('POST', '/users', { name: 'has money', balance: '1.00' });
      const kept = await gw.admin('DELETE', `/users/${funded.body.id}`);
      assert.equal(kept.status, 409);
      assert.equal(errorA(kept.body).type, 'invalid_request_error');
      assert.equal((await gw.admin('GET', `/users/${funded.body.id}`)).status, 200);

      const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'owner' });
      const emptyOrg = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'empty org', ownerId: owner.body.id });
      const fundedOrg = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'funded org', ownerId: owner.body.id, balance: '2.00' });
      assert.equal((await gw.admin('DELETE', `/orgs/${fundedOrg.body.id}`)).status, 409);
      assert.equal((await gw.admin('DELETE', `/users/${owner.body.id}`)).status, 409, 'an org member is kept');
      assert.equal((await gw.admin('DELETE', `/orgs/${emptyOrg.body.id}`)).status, 200);
      assert.equal((await gw.admin('GET', `/orgs/${emptyOrg.body.id}`)).status, 404);
      assert.equal((await gw.admin('DELETE', '/orgs/org_nope')).status, 404);
    });

    test('orgs: list with cursors, get with members, members list; unknown org 404', async () => {
      const owner = await gw.admin<{ id: string }>('POST', '/users', { name: 'Quillon owner' });
      const member = await gw.admin<{ id: string }>('POST', '/users', { name: 'Quillon member' });
      const made: string[] = [];
      for (let index = 0; index < 3; index += 1) made.push((await gw.admin<{ id: string }>('POST', '/orgs', { name: `Quillon ${index}`, ownerId: owner.body.id })).body.id);
      assert.deepEqual([...(await walk('/orgs?query=quillon'))].sort(), [...made].sort());
      assert.equal((await gw.admin('POST', `/orgs/${made[0]}/members`, { userId: member.body.id, role: 'admin' })).status, 200);
      const org = await gw.admin<{ name: string; members: Array<{ userId: string; role: string }> }>('GET', `/orgs/${made[0]}`);
      assert.equal(org.status, 200);
      assert.deepEqual(
        org.body.members.map((entry) => [entry.userId, entry.role]).sort(),
        [[owner.body.id, 'owner'], [member.body.id, 'admin']].sort(),
      );
      const members = await gw.admin<Page<{ userId: string }>>('GET', `/orgs/${made[0]}/members`);
      assert.equal(members.body.data.length, 2);
      assert.equal((await gw.admin('GET', '/orgs/org_nope')).status, 404);
      assert.equal((await gw.admin('GET', '/orgs/org_nope/members')).status, 404);
    });

    test('the audit log records admin actions with actor, ip, before and after, filtered and paged', async () => {
      const user = await gw.admin<{ id: string }>('POST', '/users', { name: 'Audited' });
      await gw.admin('PATCH', `/users/${user.body.id}`, { name: 'Audited again' });
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'audited org', ownerId: user.body.id });
      await gw.admin('PATCH', `/orgs/${org.body.id}`, { promptCaching: true });
      const credit = await fetch(`${gw.url}/admin/v1/balance`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.adminToken}`, 'content-type': 'application/json', 'idempotency-key': 'audit-topup' },
        body: JSON.stringify({ orgId: org.body.id, amount: '3.00', note: 'invoice 7' }),
      });
      assert.equal(credit.status, 200);
      await gw.admin('POST', '/vouchers', { amount: '1.00', count: 2 });

      const forUser = await gw.admin<Page<AuditRow>>('GET', `/audit?targetId=${user.body.id}`);
      assert.deepEqual(forUser.body.data.map((entry) => entry.action), ['user.update', 'user.create']);
      const update = forUser.body.data[0]!;
      assert.deepEqual(update.before, { name: 'Audited', email: null, operator: false });
      assert.equal(update.after?.name, 'Audited again');
      assert.equal(update.actor.type, 'admin');
      assert.equal(update.actor.ip, '127.0.0.1');

      const forOrg = await gw.admin<Page<AuditRow>>('GET', `/audit?orgId=${org.body.id}`);
      assert.deepEqual(forOrg.body.data.map((entry) => entry.action), ['balance.credit', 'org.update', 'org.create']);
      assert.deepEqual(forOrg.body.data[0]!.after, { balance: '3.00', amount: '3.00', note: 'invoice 7', idempotencyKey: 'audit-topup' });
      assert.deepEqual([forOrg.body.data[1]!.before?.promptCaching, forOrg.body.data[1]!.after?.promptCaching], [false, true]);
      const vouchers = await gw.admin<Page<AuditRow>>('GET', '/audit?action=voucher.create');
      assert.ok(vouchers.body.data.length >= 1);
      assert.equal((vouchers.body.data[0]!.after as { ids: string[] }).ids.length, 2);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { body: Page<AuditRow> } = await gw.admin('GET', `/audit?orgId=${org.body.id}&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.body.data.map((entry) => entry.id));
        cursor = page.body.next_cursor;
      } while (cursor);
      assert.deepEqual(seen, forOrg.body.data.map((entry) => entry.id));
      assert.equal((await gw.admin('GET', '/audit?limit=abc')).status, 400);
      assert.equal((await gw.admin('GET', '/audit?cursor=%%%')).status, 400);
    });

    test("an org's owner and admins read its audit log at /api/v1/orgs/:id/audit; a member gets 403, an outsider 404, an inference key 403", async () => {
      const owner = await createCustomer(gw);
      const member = await createCustomer(gw);
      const outsider = await createCustomer(gw);
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'audited by owner', ownerId: owner.userId });
      await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.userId, role: 'member' });
      const ownerLog = await (await signIn(gw, owner)).call<Page<AuditRow>>('GET', `/orgs/${org.body.id}/audit`);
      assert.equal(ownerLog.status, 200);
      assert.deepEqual(ownerLog.body.data.map((entry) => entry.action), ['member.update', 'org.create']);
      assert.ok(ownerLog.body.data.every((entry) => entry.orgId === org.body.id), 'only this org');
      const memberLog = await (await signIn(gw, member)).call('GET', `/orgs/${org.body.id}/audit`);
      assert.equal(memberLog.status, 403);
      assert.equal(errorA(memberLog.body).type, 'permission_error');
      assert.equal((await (await signIn(gw, outsider)).call('GET', `/orgs/${org.body.id}/audit`)).status, 404);
      const { key } = await gw.fundedKey({ userId: owner.userId });
      assert.equal((await apiClient(gw, key)('GET', `/orgs/${org.body.id}/audit`)).status, 403);
      assert.equal((await (await signIn(gw, owner)).call('GET', `/orgs/${org.body.id}/audit?limit=0`)).status, 400);
    });

    test('every admin list and view needs the admin token (401)', async () => {
      const stranger = jsonClient(`${gw.url}/admin/v1`, 'not-the-token');
      for (const path of ['/users', '/users/usr_x', '/orgs', '/orgs/org_x', '/orgs/org_x/members', '/audit', '/vouchers']) {
        assert.equal((await stranger('GET', path)).status, 401, path);
      }
      assert.equal((await stranger('PATCH', '/users/usr_x', { name: 'x' })).status, 401);
      assert.equal((await stranger('DELETE', '/orgs/org_x')).status, 401);
    });
  });
}
