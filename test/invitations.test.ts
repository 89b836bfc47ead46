import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { apiClient, createCustomer, signIn, type Customer, type SignedInClient } from './helpers/management.ts';

interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  token: string;
  url: string;
  expiresAt: string;
}
interface OrgView {
  members: Array<{ id: string; email: string; role: string }>;
}

const DAY_MS = 24 * 3_600_000;

/** Posts to the accept link as a browser with no session (someone new) or with a cookie and CSRF token. */
async function acceptAnonymously(gw: TestGateway, token: string, body: unknown): Promise<{ status: number; body: Record<string, unknown>; cookie: string }> {
  const response = await fetch(`${gw.url}/api/v1/invitations/${token}/accept`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, cookie: (response.headers.get('set-cookie') ?? '').split(';')[0]! };
}

/** DESIGN §10 invitations and sign-up modes: single use, expiry, email match, roles, concurrency. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`invitations and sign-up (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database, config: { signup: 'invite' } });
    });
    after(async () => {
      await gw?.close();
    });

    const orgWithOwner = async (): Promise<{ orgId: string; owner: SignedInClient; ownerId: string }> => {
      const owner = await createCustomer(gw, { name: 'Owner' });
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: owner.userId });
      return { orgId: org.body.id, owner: await signIn(gw, owner), ownerId: owner.userId };
    };
    const invite = async (client: SignedInClient, orgId: string, email: string, role = 'member') => client.call<Invitation>('POST', `/orgs/${orgId}/invitations`, { email, role });
    const membersOf = async (client: SignedInClient, orgId: string) => (await client.call<OrgView>('GET', `/orgs/${orgId}`)).body.members;

    test('an owner invites by email; the signed-in user with that email accepts once and joins with the role', async () => {
      const { orgId, owner } = await orgWithOwner();
      const guest: Customer = await createCustomer(gw, { name: 'Guest' });
      const created = await invite(owner, orgId, guest.email.toUpperCase(), 'admin');
      assert.equal(created.status, 200, JSON.stringify(created.body));
      assert.equal(created.body.url, `${gw.url}/invite/${created.body.token}`);
      assert.equal(Date.parse(created.body.expiresAt), gw.clock.now() + 7 * DAY_MS, 'valid for 7 days');
      assert.deepEqual({ email: created.body.email, role: created.body.role, status: created.body.status }, { email: guest.email, role: 'admin', status: 'pending' });

      const stored = await gw.storage.db.selectFrom('invitations').select('token_hash').where('id', '=', created.body.id).executeTakeFirstOrThrow();
      assert.notEqual(stored.token_hash, created.body.token, 'only a hash of the token is stored');
      const listed = await owner.call<{ object: string; data: Array<Record<string, unknown>>; next_cursor: string | null }>('GET', `/orgs/${orgId}/invitations`);
      assert.equal(listed.body.object, 'list');
      assert.ok(!JSON.stringify(listed.body).includes(created.body.token), 'the token is never shown again');

      const client = await signIn(gw, guest);
      const accepted = await client.call<{ orgId: string; role: string }>('POST', `/invitations/${created.body.token}/accept`);
      assert.deepEqual({ status: accepted.status, orgId: accepted.body.orgId, role: accepted.body.role }, { status: 200, orgId, role: 'admin' });
      assert.equal((await membersOf(owner, orgId)).find((member) => member.id === guest.userId)?.role, 'admin');
      const again = await client.call('POST', `/invitations/${created.body.token}/accept`);
      assert.equal(again.status, 409, 'single use');
      const after = await owner.call<{ data: Invitation[] }>('GET', `/orgs/${orgId}/invitations`);
      assert.equal(after.body.data.find((entry) => entry.id === created.body.id)?.status, 'accepted');
      const actions = (await gw.app.services.audit.list({ orgId, limit: 10 })).entries.map((entry) => entry.action);
      // Newest first: the admin's creation of the org is audited too.
      assert.deepEqual(actions, ['invitation.accept', 'invitation.create', 'org.create']);
    });

    test('someone else’s email is refused (403) and the invitation stays usable; expiry and revocation make it 404', async () => {
      const { orgId, owner } = await orgWithOwner();
      const other = await signIn(gw, await createCustomer(gw));
      const created = await invite(owner, orgId, 'someone-else@example.com');
      const wrong = await other.call('POST', `/invitations/${created.body.token}/accept`);
      assert.equal(wrong.status, 403);
      assert.equal(errorA(wrong.body).type, 'permission_error');
      const pending = await owner.call<{ data: Invitation[] }>('GET', `/orgs/${orgId}/invitations`);
      assert.equal(pending.body.data[0]?.status, 'pending');

      gw.clock.advance(7 * DAY_MS + 1);
      const expired = await acceptAnonymously(gw, created.body.token, { name: 'Late', password: 'long-enough-password' });
      assert.equal(expired.status, 404);
      assert.equal((await owner.call<{ data: Invitation[] }>('GET', `/orgs/${orgId}/invitations`)).body.data[0]?.status, 'expired');

      const fresh = await invite(owner, orgId, 'revoked@example.com');
      const revoked = await owner.call<Invitation>('DELETE', `/orgs/${orgId}/invitations/${fresh.body.id}`);
      assert.deepEqual({ status: revoked.status, state: revoked.body.status }, { status: 200, state: 'revoked' });
      assert.equal((await acceptAnonymously(gw, fresh.body.token, { name: 'Nope', password: 'long-enough-password' })).status, 404);
      assert.equal((await acceptAnonymously(gw, 'tgi-not-a-token', { name: 'Nope', password: 'long-enough-password' })).status, 404);
      assert.equal((await gw.app.services.audit.list({ orgId, action: 'invitation.revoke', limit: 5 })).entries.length, 1);
    });

    test('with sign-up `invite`, someone new accepts with a name and a password: created with the invited email and signed in', async () => {
      const { orgId, owner } = await orgWithOwner();
      const created = await invite(owner, orgId, 'Newcomer@Example.com');
      const short = await acceptAnonymously(gw, created.body.token, { name: 'New', password: 'short' });
      assert.equal(short.status, 400);
      assert.equal(errorA(short.body).param, 'password');
      assert.equal((await acceptAnonymously(gw, created.body.token, { password: 'long-enough-password' })).status, 400, 'a name is required');

      const joined = await acceptAnonymously(gw, created.body.token, { name: 'Nina Newcomer', password: 'long-enough-password' });
      assert.equal(joined.status, 200, JSON.stringify(joined.body));
      assert.match(joined.cookie, /^tollgate_session=/);
      const user = joined.body.user as { id: string; email: string; name: string; balance: string };
      assert.deepEqual({ email: user.email, name: user.name, balance: user.balance, role: joined.body.role }, { email: 'newcomer@example.com', name: 'Nina Newcomer', balance: '0.00', role: 'member' });
      const me = await fetch(`${gw.url}/api/v1/me`, { headers: { cookie: joined.cookie } });
      assert.equal(((await me.json()) as { orgs: Array<{ id: string }> }).orgs[0]?.id, orgId, 'the new session sees the org');
      const login = await signIn(gw, { email: 'newcomer@example.com', password: 'long-enough-password' });
      assert.ok(login.csrfToken, 'the new user signs in with the password given');

      const taken = await invite(owner, orgId, (await createCustomer(gw)).email);
      const existing = await acceptAnonymously(gw, taken.body.token, { name: 'Impostor', password: 'long-enough-password' });
      assert.equal(existing.status, 409, 'a registered email must sign in to accept');
      assert.equal((await owner.call<{ data: Invitation[] }>('GET', `/orgs/${orgId}/invitations`)).body.data[0]?.status, 'pending', 'the refused accept did not spend it');
    });

    test('two accepts of one link at once give one member', async () => {
      const { orgId, owner } = await orgWithOwner();
      const created = await invite(owner, orgId, 'racer@example.com');
      const results = await Promise.all([1, 2, 3].map((n) => acceptAnonymously(gw, created.body.token, { name: `Racer ${n}`, password: 'long-enough-password' })));
      assert.deepEqual(results.map((result) => result.status).sort(), [200, 409, 409]);
      const members = await membersOf(owner, orgId);
      assert.equal(members.filter((member) => member.email === 'racer@example.com').length, 1);
      const users = await gw.storage.db.selectFrom('users').select('id').where('email', '=', 'racer@example.com').execute();
      assert.equal(users.length, 1, 'one user was created');
    });

    test('roles and doors: only an owner invites an owner, a member cannot invite or list (403), a stranger gets 404, CSRF and key scope, bad input', async () => {
      const { orgId, owner, ownerId } = await orgWithOwner();
      const admin = await createCustomer(gw);
      const member = await createCustomer(gw);
      await gw.admin('POST', `/orgs/${orgId}/members`, { userId: admin.userId, role: 'admin' });
      await gw.admin('POST', `/orgs/${orgId}/members`, { userId: member.userId, role: 'member' });
      const [adminClient, memberClient, stranger] = [await signIn(gw, admin), await signIn(gw, member), await signIn(gw, await createCustomer(gw))];
      assert.equal((await invite(adminClient, orgId, 'a@example.com', 'admin')).status, 200, 'an admin invites admins and members');
      const ownerInvite = await invite(adminClient, orgId, 'b@example.com', 'owner');
      assert.equal(ownerInvite.status, 403);
      assert.equal(errorA(ownerInvite.body).type, 'permission_error');
      assert.equal((await invite(owner, orgId, 'b@example.com', 'owner')).status, 200);
      assert.equal((await invite(memberClient, orgId, 'c@example.com')).status, 403);
      assert.equal((await memberClient.call('GET', `/orgs/${orgId}/invitations`)).status, 403);
      assert.equal((await invite(stranger, orgId, 'd@example.com')).status, 404);
      assert.equal((await stranger.call('GET', `/orgs/${orgId}/invitations`)).status, 404);
      assert.equal((await owner.withoutCsrf('POST', `/orgs/${orgId}/invitations`, { email: 'e@example.com', role: 'member' })).status, 403);
      const { key } = await gw.fundedKey({ userId: ownerId });
      assert.equal((await apiClient(gw, key)('POST', `/orgs/${orgId}/invitations`, { email: 'e@example.com', role: 'member' })).status, 403);
      for (const body of [{ email: 'not-an-email', role: 'member' }, { email: 'f@example.com', role: 'boss' }]) {
        const bad = await owner.call('POST', `/orgs/${orgId}/invitations`, body);
        assert.equal(bad.status, 400, JSON.stringify(body));
        assert.equal(errorA(bad.body).type, 'invalid_request_error');
      }
      const page = await owner.call<{ data: Invitation[]; next_cursor: string | null }>('GET', `/orgs/${orgId}/invitations?limit=1`);
      assert.equal(page.body.data.length, 1);
      const next = await owner.call<{ data: Invitation[] }>('GET', `/orgs/${orgId}/invitations?limit=1&cursor=${page.body.next_cursor}`);
      assert.notEqual(next.body.data[0]?.id, page.body.data[0]?.id, 'the cursor moves on');
      assert.equal((await owner.call('GET', `/orgs/${orgId}/invitations?cursor=bogus`)).status, 400);
    });

    test('sign-up: `invite` refuses a plain sign-up (403); `open` creates the user and signs them in; `closed` refuses both doors', async () => {
      const signUp = (target: TestGateway, body: unknown) => fetch(`${target.url}/api/v1/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const person = { email: 'Solo@Example.com', password: 'long-enough-password', name: 'Solo' };
      const inviteOnly = await signUp(gw, person);
      assert.equal(inviteOnly.status, 403);
      assert.equal(errorA(await inviteOnly.json()).code, 'signup_closed');

      // On PostgreSQL they share the first gateway's schema, as nodes of one deployment do (Kysely's migrator mistakes another
      // schema's lock table for its own when one process opens several schemas).
      const shared = { database: { url: gw.databaseUrl }, simulator: gw.simulator } as const;
      const open = await startTestGateway({ ...shared, config: { signup: 'open' } });
      const closed = await startTestGateway({ ...shared, config: { signup: 'closed' } });
      try {
        const created = await signUp(open, person);
        assert.equal(created.status, 200);
        const body = (await created.json()) as { user: { email: string; name: string; balance: string }; csrfToken: string };
        assert.deepEqual(body.user, { ...body.user, email: 'solo@example.com', name: 'Solo', balance: '0.00' });
        const cookie = (created.headers.get('set-cookie') ?? '').split(';')[0]!;
        assert.match(created.headers.get('set-cookie') ?? '', /HttpOnly/i);
        assert.equal((await fetch(`${open.url}/api/v1/me`, { headers: { cookie } })).status, 200);
        assert.equal((await signUp(open, { ...person, email: 'solo@example.com' })).status, 409, 'an email is registered once');
        for (const bad of [{ ...person, email: 'nope' }, { ...person, password: 'short' }, { ...person, name: '' }]) {
          const refused = await signUp(open, { ...bad, email: bad.email === 'nope' ? 'nope' : `x${Math.random()}@example.com` });
          assert.equal(refused.status, 400, JSON.stringify(bad));
        }

        assert.equal((await signUp(closed, person)).status, 403);
        const owner = await createCustomer(closed);
        const org = await closed.admin<{ id: string }>('POST', '/orgs', { name: 'Closed', ownerId: owner.userId });
        const invitation = await (await signIn(closed, owner)).call<Invitation>('POST', `/orgs/${org.body.id}/invitations`, { email: 'new@example.com', role: 'member' });
        const refused = await acceptAnonymously(closed, invitation.body.token, { name: 'New', password: 'long-enough-password' });
        assert.equal(refused.status, 403, 'closed: only users the operator made can accept');
      } finally {
        await open.close();
        await closed.close();
      }
    });
  });
}
