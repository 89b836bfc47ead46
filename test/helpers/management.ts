import { randomBytes } from 'node:crypto';
import type { TestGateway } from './gateway.ts';
import { jsonClient, type JsonCall } from './json-client.ts';

/** A customer who can sign in: a user with an email, a password and a balance. */
export interface Customer {
  userId: string;
  email: string;
  password: string;
}

export async function createCustomer(gateway: TestGateway, options: { balance?: string; operator?: boolean; name?: string } = {}): Promise<Customer> {
  const email = `customer-${randomBytes(5).toString('hex')}@example.com`;
  const password = `pw-${randomBytes(8).toString('hex')}`;
  const created = await gateway.admin<{ id: string }>('POST', '/users', { name: options.name ?? 'customer', balance: options.balance ?? '10.00', email, password, operator: options.operator ?? false });
  if (created.status !== 200) throw new Error(`creating a customer failed: ${JSON.stringify(created.body)}`);
  return { userId: created.body.id, email, password };
}

/** A browser's view: calls carry the session cookie and, unless `withoutCsrf`, the CSRF token. */
export interface SignedInClient {
  call: JsonCall;
  /** The same calls without the x-csrf-token header (CSRF tests). */
  withoutCsrf: JsonCall;
  cookie: string;
  csrfToken: string;
}

export async function signIn(gateway: TestGateway, customer: Pick<Customer, 'email' | 'password'>): Promise<SignedInClient> {
  const response = await fetch(`${gateway.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: customer.email, password: customer.password }),
  });
  if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${await response.text()}`);
  const { csrfToken } = (await response.json()) as { csrfToken: string };
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
  return { call: cookieClient(`${gateway.url}/api/v1`, cookie, csrfToken), withoutCsrf: cookieClient(`${gateway.url}/api/v1`, cookie), cookie, csrfToken };
}

function cookieClient(base: string, cookie: string, csrfToken?: string): JsonCall {
  return async <T,>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { cookie, ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

/** A management-scope key of the user, and a client of /api/v1 that uses it. */
export async function managementKey(gateway: TestGateway, userId: string, orgId?: string): Promise<{ key: string; keyId: string; call: JsonCall }> {
  const created = await gateway.admin<{ id: string; key: string }>('POST', '/keys', { userId, orgId: orgId ?? null, scope: 'management', name: 'scripts' });
  if (created.status !== 200) throw new Error(`creating a management key failed: ${JSON.stringify(created.body)}`);
  return { key: created.body.key, keyId: created.body.id, call: jsonClient(`${gateway.url}/api/v1`, created.body.key) };
}

/** A client of /api/v1 with any key text (an inference key, to show it is refused). */
export const apiClient = (gateway: TestGateway, key: string): JsonCall => jsonClient(`${gateway.url}/api/v1`, key);
