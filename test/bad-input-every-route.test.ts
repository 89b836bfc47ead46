import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorA } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer, managementKey, signIn, type SignedInClient } from './helpers/management.ts';

/**
 * Bad input never gets a 5xx, on any route the gateway documents (bad-input.test.ts goes deeper on the inference
 * endpoints). Every path and method of /openapi.json is called with malformed bodies, junk ids and junk query strings,
 * with the credential its door takes (admin token, session cookie and CSRF token, management key, inference key), and
 * with the real ids of resources the caller owns, so that bodies reach validation rather than stopping at a 404.
 */

const BODIES: Array<[string, string]> = [
  ['not JSON', '{"name": '],
  ['a JSON array', '[1, 2]'],
  ['JSON null', 'null'],
  ['a JSON string', '"x"'],
  ['an empty object', '{}'],
  [
    'wrong types everywhere',
    JSON.stringify({
      name: 42, email: 5, password: [], amount: 'lots', balance: {}, scope: 9, role: null, code: 1, model: 3, models: 'a', enabled: 'no',
      expiresAt: 'soon', spendLimits: [1], rpm: -1, tpm: 'a', webhookUrl: 7, assistantId: 1, orgId: 5, userId: [], note: {}, input: 5,
      messages: 'x', title: false, count: 'three', weight: 'heavy', priority: {}, baseUrl: 12, apiKey: [],
    }),
  ],
  [
    'numbers out of range',
    JSON.stringify({ amount: '1e400', balance: '99999999999999999999999999999', count: 1e308, rpm: 1e308, tpm: -1e308, spendLimits: { day: '1e99', week: 'NaN', month: '-1', total: 'Infinity' }, expiresAt: 1e20 }),
  ],
  ['nested junk', JSON.stringify({ name: { a: [{ b: null }] }, spendLimits: { day: { x: 1 } }, metadata: [[[]]], access: [null] })],
];

const QUERIES = ['?limit=abc', '?limit=-1', '?limit=99999999999', '?cursor=%25%25', '?cursor=AAAA', '?before=zzz', '?from=yesterday&to=1e999', '?groupBy=nothing', '?groupBy=day,day', '?status=abc', '?offset=1e300'];
const JUNK_IDS = ['nope', '0', '..', 'x'.repeat(300), '9999999999999999999999'];

type Headers = Record<string, string>;

/** A 4xx body in one of the shapes of SPEC 2.10 (or the bot API's), with a message a person can read. */
function errorMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const record = body as Record<string, unknown>;
  const inner = record.error as Record<string, unknown> | undefined;
  if (inner && typeof inner === 'object' && typeof inner.message === 'string') return inner.message;
  if (typeof record.message === 'string') return record.message;
  return undefined;
}

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`bad input on every documented route (${database})`, () => {
    let gw: TestGateway;
    let session: SignedInClient;
    let managementHeaders: Headers;
    let inferenceHeaders: Headers;
    let userId: string;
    /** A real id for a path parameter, by the collection segment before it (or the parameter's own name). */
    const realIds = new Map<string, string>();

    before(async () => {
      gw = await startTestGateway({ database });
      const customer = await createCustomer(gw, { balance: '5.00' });
      userId = customer.userId;
      session = await signIn(gw, customer);
      const management = await managementKey(gw, userId);
      managementHeaders = { authorization: `Bearer ${management.key}` };
      const inference = await gw.fundedKey({ userId, balance: '5.00' });
      inferenceHeaders = { authorization: `Bearer ${inference.key}` };
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Sweep', ownerId: userId, balance: '2.00' });
      const voucher = await gw.admin<{ id: string }>('POST', '/vouchers', { amount: '1.00', count: 1 });
      const mention = `sweep${Date.now().toString(36)}`;
      const assistant = await session.call<{ id: string | number }>('POST', '/assistants', { mention, title: 'Sweep', modelId: 'gpt-4o-mini' });
      const bot = await session.call<{ id: string }>('POST', '/bots', { name: 'Sweep bot', assistantId: String(assistant.body.id), webhookUrl: 'https://chat.example.com/hook' });
      const knowledge = await session.call<{ id: string }>('POST', '/knowledge', { title: 'Sweep' });
      const invitation = await session.call<{ id: string }>('POST', `/orgs/${org.body.id}/invitations`, { email: 'someone@example.com', role: 'member' });
      for (const [what, response] of Object.entries({ org, voucher, assistant, bot, knowledge, invitation })) {
        assert.equal(response.status, 200, `${what}: ${JSON.stringify(response.body)}`);
      }
      const entries: Array<[string, string]> = [
        ['users', userId], ['userId', userId], ['orgs', org.body.id], ['keys', management.keyId], ['bots', bot.body.id], ['models', 'gpt-4o-mini'],
        ['providers', 'openai'], ['vouchers', voucher.body.id], ['assistants', String(assistant.body.id)], ['by-mention', mention],
        ['knowledge', knowledge.body.id], ['invitationId', invitation.body.id],
      ];
      for (const [name, id] of entries) realIds.set(name, id);
    });
    after(async () => {
      await gw?.close();
    });

    /** The path with every parameter replaced by `id`, or by the real id of its kind (undefined when one has none). */
    const withIds = (path: string, id: (segment: string, parameter: string) => string | undefined): string | undefined => {
      let missing = false;
      const filled = path.replace(/([^/]+)\/\{([^}]+)\}/g, (_, segment: string, parameter: string) => {
        const value = id(segment, parameter);
        if (value === undefined) missing = true;
        return `${segment}/${encodeURIComponent(value ?? '')}`;
      });
      return missing ? undefined : filled;
    };

    test('no 5xx and a readable error for malformed bodies, junk ids and junk queries; nothing charged', async (t) => {
      const document = (await (await fetch(`${gw.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
      const balanceBefore = await gw.balance({ userId });
      const failures: string[] = [];
      let calls = 0;
      const send = async (method: string, url: string, headers: Headers, body?: string): Promise<void> => {
        calls++;
        const response = await fetch(`${gw.url}${url}`, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body }),
        });
        const text = await response.text();
        const what = `${method} ${url} ${body?.slice(0, 40) ?? ''}`;
        if (response.status >= 500) failures.push(`${response.status} ${what} → ${text.slice(0, 200)}`);
        else if (response.status >= 400) {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = undefined;
          }
          const message = errorMessage(parsed);
          if (!message) failures.push(`${response.status} without a readable error: ${what} → ${text.slice(0, 200)}`);
          else if (/^\/(admin|api)\/v1\//.test(url)) {
            try {
              errorA(parsed);
            } catch {
              failures.push(`${response.status} not in shape A: ${what} → ${text.slice(0, 200)}`);
            }
          }
        }
      };
      const doors = (path: string): Headers[] => {
        if (path.startsWith('/admin/')) return [{ authorization: `Bearer ${gw.adminToken}` }];
        if (path.startsWith('/api/v1/')) return [{ cookie: session.cookie, 'x-csrf-token': session.csrfToken }, managementHeaders];
        return [inferenceHeaders];
      };
      let routes = 0;
      for (const [path, operations] of Object.entries(document.paths)) {
        // Signing out ends the session the sweep runs on; signing in is throttled per address (sign-in.test.ts).
        if (path === '/api/v1/auth/logout' || path === '/api/v1/auth/login') continue;
        for (const method of Object.keys(operations).map((name) => name.toUpperCase())) {
          routes++;
          const urls = [...JUNK_IDS.map((junk) => withIds(path, () => junk))];
          // Real ids reach the body's validation; never for DELETE, which would remove what the rest of the sweep uses.
          if (method !== 'DELETE') urls.push(withIds(path, (segment, parameter) => realIds.get(parameter) ?? realIds.get(segment)));
          for (const url of new Set(urls.filter((candidate): candidate is string => candidate !== undefined))) {
            for (const headers of doors(path)) {
              if (method === 'GET' || method === 'DELETE' || method === 'HEAD') {
                await send(method, url, headers);
                if (method === 'GET') for (const query of QUERIES) await send(method, url + query, headers);
              } else for (const [, body] of BODIES) await send(method, url, headers, body);
            }
          }
        }
      }
      t.diagnostic(`${routes} routes, ${calls} calls`);
      assert.ok(routes > 100, `the sweep covered ${routes} routes`);
      assert.ok(calls > 5_000, `the sweep made ${calls} calls`);
      assert.deepEqual(failures, []);
      assert.equal(await gw.balance({ userId }), balanceBefore, 'no malformed call moved the balance');
    });
  });
}
