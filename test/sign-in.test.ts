import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn } from './helpers/management.ts';

/** DESIGN §10: sessions with a cookie and a CSRF token, key scopes, GET /api/v1/me and /api/v1/key. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`sign-in and the management API's doors (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    const login = (email: string, password: string) =>
      fetch(`${gw.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });

    test('sign in with email and password: an HttpOnly SameSite=Lax cookie, the user and a CSRF token; the session answers until logout', async () => {
      const customer = await createCustomer(gw, { balance: '7.50', name: 'Ada' });
      const response = await login(customer.email.toUpperCase(), customer.password);
      assert.equal(response.status, 200, 'the email is case-insensitive');
      const cookie = response.headers.get('set-cookie') ?? '';
      assert.match(cookie, /^tollgate_session=[^;]{20,}/);
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /SameSite=Lax/i);
      assert.doesNotMatch(cookie, /Secure/i, 'not Secure on a plain-http gateway');
      const body = (await response.json()) as { user: { id: string; email: string; balance: string }; csrfToken: string };
      assert.equal(body.user.id, customer.userId);
      assert.equal(body.user.email, customer.email);
      assert.ok(body.csrfToken.length >= 20);

      const client = await signIn(gw, customer);
      const session = await fetch(`${gw.url}/api/v1/auth/session`, { headers: { cookie: client.cookie } });
      assert.equal(session.status, 200);
      assert.equal(((await session.json()) as { csrfToken: string }).csrfToken, client.csrfToken);
      const me = await client.call<{ name: string; balance: string; operator: boolean; orgs: unknown[] }>('GET', '/me');
      assert.deepEqual({ status: me.status, name: me.body.name, balance: me.body.balance, operator: me.body.operator, orgs: me.body.orgs }, { status: 200, name: 'Ada', balance: '7.50', operator: false, orgs: [] });

      assert.equal((await client.call('POST', '/auth/logout')).status, 200);
      assert.equal((await client.call('GET', '/me')).status, 401, 'the session is gone from the database');
      assert.equal((await fetch(`${gw.url}/api/v1/auth/session`, { headers: { cookie: client.cookie } })).status, 401);
    });

    test('a wrong email and a wrong password get the same 401; ten failures for one email in 15 minutes → 429', async () => {
      const customer = await createCustomer(gw);
      const wrongPassword = await login(customer.email, 'not-the-password');
      const wrongEmail = await login(`nobody-${customer.email}`, customer.password);
      assert.equal(wrongPassword.status, 401);
      assert.equal(wrongEmail.status, 401);
      assert.deepEqual(errorA(await wrongPassword.json()).message, errorA(await wrongEmail.json()).message);
      assert.equal(wrongPassword.headers.get('x-should-retry'), 'false');
      for (let attempt = 0; attempt < 9; attempt += 1) assert.equal((await login(customer.email, `wrong-${attempt}`)).status, 401);
      const throttled = await login(customer.email, customer.password);
      assert.equal(throttled.status, 429, 'even the right password waits once the email is throttled');
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
      gw.clock.advance(15 * 60_000 + 1);
      assert.equal((await login(customer.email, customer.password)).status, 200, 'the window passes');
    });

    test('a session must send its CSRF token to change state (403 without); reads need none', async () => {
      const customer = await createCustomer(gw);
      const client = await signIn(gw, customer);
      assert.equal((await client.withoutCsrf('GET', '/me')).status, 200);
      const refused = await client.withoutCsrf('PATCH', '/me', { name: 'Changed' });
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).type, 'permission_error');
      assert.equal((await client.call<{ name: string }>('GET', '/me')).body.name, 'customer', 'nothing changed');
      const changed = await client.call<{ name: string }>('PATCH', '/me', { name: 'Changed' });
      assert.deepEqual({ status: changed.status, name: changed.body.name }, { status: 200, name: 'Changed' });
    });

    test('a password change needs the current password, signs out the other browsers, and the new one signs in', async () => {
      const customer = await createCustomer(gw);
      const first = await signIn(gw, customer);
      const second = await signIn(gw, customer);
      const wrong = await first.call('PATCH', '/me', { password: { current: 'wrong-password', new: 'a-new-password' } });
      assert.equal(wrong.status, 403);
      const short = await first.call('PATCH', '/me', { password: { current: customer.password, new: 'short' } });
      assert.equal(short.status, 400);
      assert.equal((await first.call('PATCH', '/me', { password: { current: customer.password, new: 'a-new-password' } })).status, 200);
      assert.equal((await second.call('GET', '/me')).status, 401, 'the other session ended');
      assert.equal((await first.call('GET', '/me')).status, 200, 'this one stays');
      assert.equal((await login(customer.email, customer.password)).status, 401);
      assert.equal((await login(customer.email, 'a-new-password')).status, 200);
    });

    test('key scopes: a management key reaches /api/v1 but not the model endpoints; an inference key the reverse; GET /api/v1/key answers both', async () => {
      const { key: inferenceKey, userId } = await gw.fundedKey({ balance: '3.00' });
      const management = await managementKey(gw, userId);
      assert.equal((await management.call('GET', '/me')).status, 200);
      const inferenceOnManagement = await apiClient(gw, inferenceKey)('GET', '/me');
      assert.equal(inferenceOnManagement.status, 403);
      assert.equal(errorA(inferenceOnManagement.body).code, 'wrong_key_scope');
      const chat = (key: string) =>
        fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
        });
      assert.equal((await chat(inferenceKey)).status, 200);
      const sent = gw.simulator.requests.length;
      const managementOnModels = await chat(management.key);
      assert.equal(managementOnModels.status, 403);
      assert.equal(gw.simulator.requests.length, sent, 'never reaches the vendor');
      for (const [key, scope] of [[inferenceKey, 'inference'], [management.key, 'management']] as const) {
        const self = await apiClient(gw, key)<{ scope: string; userId: string; balance: string }>('GET', '/key');
        assert.equal(self.status, 200);
        assert.equal(self.body.scope, scope);
        assert.equal(self.body.userId, userId);
        assert.ok(!JSON.stringify(self.body).includes(key), 'the secret is never shown again');
      }
      assert.equal((await apiClient(gw, 'tg-not-a-key-at-all-000000')('GET', '/key')).status, 401);
      assert.equal((await fetch(`${gw.url}/api/v1/me`)).status, 401, 'no credential');
    });

    test('bad input to sign-in is a 400 in shape A, and an email is registered once', async () => {
      const response = await fetch(`${gw.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 5 }) });
      assert.equal(response.status, 400);
      assert.equal(errorA(await response.json()).type, 'invalid_request_error');
      const customer = await createCustomer(gw);
      const again = await gw.admin('POST', '/users', { name: 'twin', email: customer.email.toUpperCase(), password: 'another-password' });
      assert.equal(again.status, 409);
      assert.equal((await gw.admin('POST', '/users', { name: 'weak', email: 'weak@example.com', password: 'short' })).status, 400);
      assert.equal((await gw.admin('POST', '/users', { name: 'bad', email: 'not-an-email', password: 'long-enough-1' })).status, 400);
    });
  });
}
