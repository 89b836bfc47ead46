import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { errorA } from './helpers/e2e.ts';
import { createCustomer, managementKey, signIn } from './helpers/management.ts';

/**
 * DESIGN §11: an operator (a user with `operator: true`) signs in to the console's operator pages, which call the admin API with
 * the session — the same routes and rules as the admin token, with CSRF on changes and the operator named in the audit log.
 */
/** The answer has the status and a shape A error body. */
function refused(answer: { status: number; body: unknown }, status: number): void {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  errorA(answer.body);
}

describe('the admin API with an operator session', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  const adminCall = async (cookie: string, method: string, path: string, body?: unknown, csrfToken?: string) => {
    const response = await fetch(`${gw.url}/admin/v1${path}`, {
      method,
      headers: { cookie, ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
  };

  test('an operator reads and credits with the session; the change needs the CSRF token and the audit log names the operator', async () => {
    const operator = await createCustomer(gw, { operator: true, name: 'Olga the operator' });
    const customer = await createCustomer(gw, { balance: '1.00' });
    const session = await signIn(gw, operator);

    const users = await adminCall(session.cookie, 'GET', '/users?limit=100');
    assert.equal(users.status, 200, JSON.stringify(users.body));
    assert.ok((users.body!.data as Array<{ id: string }>).some((user) => user.id === customer.userId));

    const withoutCsrf = await adminCall(session.cookie, 'POST', '/balance', { userId: customer.userId, amount: '5.00', note: 'goodwill' });
    refused(withoutCsrf, 403);
    const balanceUntouched = await gw.admin<{ balance: string }>('GET', `/balance?userId=${customer.userId}`);
    assert.equal(balanceUntouched.body.balance, '1.00', 'a refused change moved no money');

    const credited = await adminCall(session.cookie, 'POST', '/balance', { userId: customer.userId, amount: '5.00', note: 'goodwill' }, session.csrfToken);
    assert.equal(credited.status, 200, JSON.stringify(credited.body));
    assert.equal(credited.body!.balance, '6.00');

    const audit = await gw.admin<{ data: Array<{ action: string; actor: { type: string; id: string | null }; target: { id: string | null } }> }>('GET', `/audit?targetId=${customer.userId}&limit=100`);
    assert.equal(audit.status, 200, JSON.stringify(audit.body));
    const credit = audit.body.data.find((entry) => entry.action === 'balance.credit');
    assert.ok(credit, `the credit is audited: ${JSON.stringify(audit.body.data)}`);
    assert.deepEqual(credit.actor.type, 'operator');
    assert.equal(credit.actor.id, operator.userId);
  });

  test('a customer who is not an operator gets 403 on the admin API; signing out ends the operator door', async () => {
    const customer = await createCustomer(gw);
    const session = await signIn(gw, customer);
    refused(await adminCall(session.cookie, 'GET', '/users'), 403);
    refused(await adminCall(session.cookie, 'POST', '/balance', { userId: customer.userId, amount: '100.00' }, session.csrfToken), 403);
    const balance = await gw.admin<{ balance: string }>('GET', `/balance?userId=${customer.userId}`);
    assert.equal(balance.body.balance, '10.00', 'the customer could not credit themselves');

    const operator = await createCustomer(gw, { operator: true });
    const operatorSession = await signIn(gw, operator);
    assert.equal((await adminCall(operatorSession.cookie, 'GET', '/users')).status, 200);
    assert.equal((await operatorSession.call('POST', '/auth/logout', {})).status, 200);
    refused(await adminCall(operatorSession.cookie, 'GET', '/users'), 401);
  });

  test("an operator's management key is no admin credential: the admin API takes the admin token or a session", async () => {
    const operator = await createCustomer(gw, { operator: true });
    const { key } = await managementKey(gw, operator.userId);
    const response = await fetch(`${gw.url}/admin/v1/users`, { headers: { authorization: `Bearer ${key}` } });
    refused({ status: response.status, body: await response.json() }, 401);
  });
});
