import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countTokens, PIXEL_PNG_BASE64 } from '../simulator/server.ts';
import { chunkDocument } from '../src/features/knowledge/chunking.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asRecord, balanceMicros, catalogEntry, errorA, tokensCostMicros, type JsonRecord } from './helpers/e2e.ts';
import { apiClient, createCustomer, managementKey, signIn, type Customer, type SignedInClient } from './helpers/management.ts';
import { advanceAndRun, download, postOk } from './helpers/tasks.ts';
import { startWebhookReceiver } from './helpers/webhook-receiver.ts';

const EMBEDDING_PRICE = catalogEntry('text-embedding-3-small').cost_context;
const MANUAL = Array.from({ length: 30 }, (_, index) => `Step ${index} of the lighthouse manual: polish lens number ${index}.`).join(' ');

interface Base {
  id: string;
  object: string;
  title: string;
  documents: number;
  chunks: number;
  characters: number;
  createdAt: string;
}
interface AddedDocument {
  id: string;
  object: string;
  knowledgeBaseId: string;
  title: string;
  characters: number;
  chunks: number;
  embeddingTokens: number;
  cost: string;
}
interface Page<T> {
  object: string;
  data: T[];
  next_cursor: string | null;
}
interface Delivery {
  attempt: number;
  event: string;
  status: string;
  httpStatus: number | null;
  at: string;
}
interface TaskView {
  id: string;
  kind: string;
  type: string;
  model: string;
  status: string;
  prompt: string | null;
  cost: string;
  paidBy: { type: string; id: string };
  result: { files: Array<{ url: string; contentType: string }>; text: string | null } | null;
  webhookUrl: string | null;
  createdAt: string;
  deliveries?: Delivery[];
  nextDelivery?: { at: string; running: boolean } | null;
}
interface LedgerEntry {
  amount: string;
  kind: string;
  requestId: string | null;
  keyId: string | null;
  model: string | null;
}
interface RequestRow {
  id: string;
  keyId: string;
  endpoint: string;
  model: string | null;
  input_tokens: number;
  cost: string;
}
interface UsageRow {
  model: string | null;
  requests: number;
  input_tokens: number;
  cost: string;
}

/** The embedding charge of a text document, as the simulator counts tokens: one price over the tokens of every chunk. */
function embeddingOf(text: string): { chunks: number; tokens: number; cost: bigint } {
  const chunks = chunkDocument(text, 'text');
  const tokens = chunks.reduce((sum, chunk) => sum + countTokens(chunk), 0);
  return { chunks: chunks.length, tokens, cost: tokensCostMicros(tokens, EMBEDDING_PRICE) };
}

/** A POST with the session (cookie and CSRF token) that also returns the request id. */
async function sessionPost(gw: TestGateway, client: SignedInClient, path: string, body: unknown): Promise<{ status: number; body: JsonRecord; requestId: string; costHeader: string | null }> {
  const response = await fetch(`${gw.url}/api/v1${path}`, {
    method: 'POST',
    headers: { cookie: client.cookie, 'x-csrf-token': client.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: asRecord(await response.json()), requestId: response.headers.get('x-request-id') ?? '', costHeader: response.headers.get('x-tollgate-cost') };
}

function expectError(result: { status: number; body: unknown }, status: number, pattern: RegExp, type = 'invalid_request_error'): void {
  assert.equal(result.status, status, JSON.stringify(result.body));
  const error = errorA(result.body);
  assert.equal(error.type, type);
  assert.match(error.message, pattern);
}

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`knowledge bases through the management API (${database})`, () => {
    let gw: TestGateway;
    let owner: Customer;
    let session: SignedInClient;
    let stranger: SignedInClient;

    before(async () => {
      gw = await startTestGateway({ database });
      owner = await createCustomer(gw, { balance: '5.00' });
      session = await signIn(gw, owner);
      stranger = await signIn(gw, await createCustomer(gw, { balance: '5.00' }));
    });
    after(async () => {
      await gw?.close();
    });

    const createBase = async (client: SignedInClient, title: string): Promise<Base> => {
      const created = await client.call<Base>('POST', '/knowledge', { title });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body;
    };

    test('a signed-in user creates a base, adds a document and sees its size; their inference key sees the same base', async () => {
      const base = await createBase(session, 'Lighthouse manuals');
      assert.match(base.id, /^kb_/);
      assert.deepEqual({ ...base, id: 'x' }, { id: 'x', object: 'knowledge_base', title: 'Lighthouse manuals', documents: 0, chunks: 0, characters: 0, createdAt: '2026-11-01T00:00:00.000Z' });

      const expected = embeddingOf(MANUAL);
      assert.ok(expected.chunks > 1, 'the manual is long enough to be cut into chunks');
      const added = await session.call<AddedDocument>('POST', `/knowledge/${base.id}/documents`, { title: 'Lens care', text: MANUAL });
      assert.equal(added.status, 200, JSON.stringify(added.body));
      assert.match(added.body.id, /^kdoc_/);
      assert.equal(added.body.object, 'knowledge_document');
      assert.equal(added.body.knowledgeBaseId, base.id);
      assert.equal(added.body.chunks, expected.chunks);
      assert.equal(added.body.characters, MANUAL.length);
      assert.equal(added.body.embeddingTokens, expected.tokens);
      assert.equal(micros(added.body.cost), expected.cost);

      const listed = await session.call<Page<Base>>('GET', '/knowledge');
      assert.equal(listed.status, 200);
      assert.deepEqual(listed.body.data.find((item) => item.id === base.id), { ...base, documents: 1, chunks: expected.chunks, characters: MANUAL.length });
      const one = await session.call<Base>('GET', `/knowledge/${base.id}`);
      assert.deepEqual(one.body, { ...base, documents: 1, chunks: expected.chunks, characters: MANUAL.length });
      const documents = await session.call<Page<JsonRecord>>('GET', `/knowledge/${base.id}/documents`);
      assert.deepEqual(documents.body, {
        object: 'list',
        data: [{ id: added.body.id, object: 'knowledge_document', knowledgeBaseId: base.id, title: 'Lens care', characters: MANUAL.length, chunks: expected.chunks, createdAt: '2026-11-01T00:00:00.000Z' }],
        next_cursor: null,
      });

      // The SPEC endpoints with the same user's inference key see the base the console made, and the other way round.
      const { key } = await gw.fundedKey({ userId: owner.userId });
      const spec = await fetch(`${gw.url}/v1/database/list`, { headers: { authorization: `Bearer ${key}` } });
      const specBases = ((await spec.json()) as { data: JsonRecord[] }).data;
      assert.deepEqual(specBases.find((item) => item.id === base.id)?.documents, 1);
      const made = asRecord((await postOk(gw, '/v1/database/create', key, { title: 'Made with a key' })).body);
      const again = await session.call<Page<Base>>('GET', '/knowledge');
      assert.equal(again.body.data[0]?.id, made.id, 'newest first, the key-made base included');
    });

    test('adding a document charges exactly what the ledger shows, booked under "console", and the request log holds it', async () => {
      const base = await createBase(session, 'Ledger check');
      const balanceBefore = await balanceMicros(gw, { userId: owner.userId });
      const added = await sessionPost(gw, session, `/knowledge/${base.id}/documents`, { title: 'Manual', text: MANUAL });
      assert.equal(added.status, 200, JSON.stringify(added.body));
      const cost = micros(String(added.body.cost));
      assert.equal(cost, embeddingOf(MANUAL).cost);
      assert.ok(cost > 0n);
      assert.equal(await balanceMicros(gw, { userId: owner.userId }), balanceBefore - cost, 'the balance fell by the cost shown');
      assert.equal(micros(added.costHeader ?? 'missing'), cost, 'x-tollgate-cost says the same');

      const ledger = await session.call<Page<LedgerEntry>>('GET', '/ledger?limit=100');
      const entries = ledger.body.data.filter((entry) => entry.requestId === added.requestId);
      assert.deepEqual(
        entries.map((entry) => [entry.kind, micros(entry.amount), entry.keyId, entry.model]),
        [['charge', -cost, 'console', 'text-embedding-3-small']],
        'one charge of exactly the cost shown',
      );

      await gw.app.services.requestLog.idle();
      const requests = await session.call<Page<RequestRow>>('GET', '/requests?limit=100');
      const row = requests.body.data.find((entry) => entry.id === added.requestId);
      assert.ok(row, 'the charged request has its request-log row');
      assert.deepEqual([row.keyId, row.endpoint, row.model, row.input_tokens, micros(row.cost)], ['console', 'knowledge.documents.add', 'text-embedding-3-small', embeddingOf(MANUAL).tokens, cost]);
    });

    test('usage grouped by model names the embedding model of document charges, as the ledger does', async () => {
      const other = await createCustomer(gw, { balance: '5.00' });
      const client = await signIn(gw, other);
      const base = await createBase(client, 'Usage check');
      const added = await client.call<AddedDocument>('POST', `/knowledge/${base.id}/documents`, { title: 'Manual', text: MANUAL });
      assert.equal(added.status, 200, JSON.stringify(added.body));
      await gw.app.services.requestLog.idle();
      const usage = await client.call<Page<UsageRow>>('GET', '/usage?from=2026-11-01&to=2026-11-01&groupBy=model');
      assert.equal(usage.status, 200, JSON.stringify(usage.body));
      assert.deepEqual(
        usage.body.data.map((row) => [row.model, row.requests, row.input_tokens, micros(row.cost)]),
        [['text-embedding-3-small', 1, embeddingOf(MANUAL).tokens, micros(added.body.cost)]],
      );
    });

    test('a management key bound to an org charges the org, as that org\'s inference key would; useWalletBalance charges the user', async () => {
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Harbour', ownerId: owner.userId, balance: '3.00' });
      assert.equal(org.status, 200, JSON.stringify(org.body));
      const scripts = await managementKey(gw, owner.userId, org.body.id);
      const created = await scripts.call<Base>('POST', '/knowledge', { title: 'Org scripts' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const text = 'The harbour light turns on at dusk and off at dawn.';
      const { cost } = embeddingOf(text);
      const orgBefore = await balanceMicros(gw, { orgId: org.body.id });
      const userBefore = await balanceMicros(gw, { userId: owner.userId });
      assert.equal((await scripts.call('POST', `/knowledge/${created.body.id}/documents`, { title: 'Dusk', text })).status, 200);
      assert.equal(await balanceMicros(gw, { orgId: org.body.id }), orgBefore - cost);
      assert.equal(await balanceMicros(gw, { userId: owner.userId }), userBefore);
      assert.equal((await scripts.call('POST', `/knowledge/${created.body.id}/documents`, { title: 'Dusk again', text, useWalletBalance: true })).status, 200);
      assert.equal(await balanceMicros(gw, { orgId: org.body.id }), orgBefore - cost);
      assert.equal(await balanceMicros(gw, { userId: owner.userId }), userBefore - cost);
      const seen = await session.call<Page<Base>>('GET', '/knowledge');
      assert.equal(seen.body.data.find((item) => item.id === created.body.id)?.documents, 2, 'the key\'s user sees the base in the console');
    });

    test('another user\'s base answers 404 to every door and costs them nothing', async () => {
      const base = await createBase(session, 'Private notes');
      const before = await gw.balance({ userId: owner.userId });
      for (const [method, path, body] of [
        ['GET', `/knowledge/${base.id}`, undefined],
        ['GET', `/knowledge/${base.id}/documents`, undefined],
        ['POST', `/knowledge/${base.id}/documents`, { title: 'Planted', text: 'Planted text.' }],
        ['DELETE', `/knowledge/${base.id}`, undefined],
      ] as const) {
        const answer = await stranger.call(method, path, body);
        expectError(answer, 404, /^Knowledge base not found$/);
        assert.equal(errorA(answer.body).param, 'id', `${method} ${path} names the path's id, the field the caller sent`);
      }
      assert.ok(!(await stranger.call<Page<Base>>('GET', '/knowledge')).body.data.some((item) => item.id === base.id));
      assert.equal((await session.call<Base>('GET', `/knowledge/${base.id}`)).body.documents, 0, 'the owner\'s base is untouched');
      assert.equal(await gw.balance({ userId: owner.userId }), before);
    });

    test('a session without its CSRF token is refused (403) and changes nothing; an inference key is refused (403)', async () => {
      const base = await createBase(session, 'CSRF target');
      const balance = await gw.balance({ userId: owner.userId });
      for (const [method, path, body] of [
        ['POST', '/knowledge', { title: 'Forged' }],
        ['POST', `/knowledge/${base.id}/documents`, { title: 'Forged', text: 'Forged text.' }],
        ['DELETE', `/knowledge/${base.id}`, undefined],
      ] as const) {
        const refused = await session.withoutCsrf(method, path, body);
        expectError(refused, 403, /x-csrf-token/, 'permission_error');
      }
      const bases = (await session.call<Page<Base>>('GET', '/knowledge?limit=100')).body.data;
      assert.ok(!bases.some((item) => item.title === 'Forged'));
      assert.equal(bases.find((item) => item.id === base.id)?.documents, 0);
      assert.equal(await gw.balance({ userId: owner.userId }), balance);

      const { key } = await gw.fundedKey({ userId: owner.userId });
      const refused = await apiClient(gw, key)('GET', '/knowledge');
      assert.equal(refused.status, 403);
      assert.equal(errorA(refused.body).code, 'wrong_key_scope');
      const anonymous = await fetch(`${gw.url}/api/v1/knowledge`);
      assert.equal(anonymous.status, 401);
    });

    test('bad input is a 400 naming the field; an empty balance is a 402 and stores nothing', async () => {
      const base = await createBase(session, 'Checks');
      expectError(await session.call('POST', '/knowledge', { title: '' }), 400, /^title: must not be empty$/);
      expectError(await session.call('POST', '/knowledge', {}), 400, /^title: is required$/);
      expectError(await session.call('POST', '/knowledge', { title: 'x'.repeat(201) }), 400, /^title: must be at most 200 characters$/);
      expectError(await session.call('POST', '/knowledge', { title: 'Typo', name: 'Typo' }), 400, /name/);
      expectError(await session.call('POST', `/knowledge/${base.id}/documents`, { title: 'No text' }), 400, /^text: is required$/);
      expectError(await session.call('POST', `/knowledge/${base.id}/documents`, { title: 'PDF', text: 'x', format: 'pdf' }), 400, /^format: /);
      expectError(await session.call('POST', `/knowledge/${base.id}/documents`, { title: 'Headings', text: '# Only\n## Headings', format: 'markdown' }), 400, /^text: must contain text to index/);
      expectError(await session.call('GET', '/knowledge?limit=0'), 400, /^limit: /);
      expectError(await session.call('GET', '/knowledge?cursor=bm90IG91cnM'), 400, /^cursor: /);
      assert.equal((await session.call<Base>('GET', `/knowledge/${base.id}`)).body.documents, 0);

      const broke = await createCustomer(gw, { balance: '0' });
      const brokeSession = await signIn(gw, broke);
      const brokeBase = await createBase(brokeSession, 'Free to create');
      expectError(await brokeSession.call('POST', `/knowledge/${brokeBase.id}/documents`, { title: 'T', text: 'Some text.' }), 402, /Balance is too low/, 'insufficient_balance_error');
      assert.equal((await brokeSession.call<Base>('GET', `/knowledge/${brokeBase.id}`)).body.documents, 0);
      assert.equal(await gw.balance({ userId: broke.userId }), '0.00');
    });

    test('pages by cursor, newest first; delete removes the base for the key as well', async () => {
      const someone = await signIn(gw, await createCustomer(gw));
      const titles = ['First', 'Second', 'Third'];
      const ids: string[] = [];
      for (const title of titles) ids.push((await createBase(someone, title)).id);
      const first = await someone.call<Page<Base>>('GET', '/knowledge?limit=2');
      assert.deepEqual(first.body.data.map((item) => item.title), ['Third', 'Second']);
      assert.ok(first.body.next_cursor);
      const second = await someone.call<Page<Base>>('GET', `/knowledge?limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual(second.body.data.map((item) => item.title), ['First']);
      assert.equal(second.body.next_cursor, null);

      const deleted = await someone.call('DELETE', `/knowledge/${ids[1]}`);
      assert.deepEqual(deleted, { status: 200, body: { id: ids[1], object: 'knowledge_base', deleted: true } });
      expectError(await someone.call('GET', `/knowledge/${ids[1]}`), 404, /^Knowledge base not found$/);
      expectError(await someone.call('DELETE', `/knowledge/${ids[1]}`), 404, /^Knowledge base not found$/);
      assert.deepEqual((await someone.call<Page<Base>>('GET', '/knowledge')).body.data.map((item) => item.title), ['Third', 'First']);
    });
  });

  describe(`tasks through the management API (${database})`, () => {
    let gw: TestGateway;
    let owner: Customer;
    let session: SignedInClient;
    let stranger: SignedInClient;
    let key: string;

    before(async () => {
      gw = await startTestGateway({ database });
      owner = await createCustomer(gw, { balance: '5.00' });
      session = await signIn(gw, owner);
      stranger = await signIn(gw, await createCustomer(gw, { balance: '5.00' }));
      ({ key } = await gw.fundedKey({ userId: owner.userId }));
    });
    after(async () => {
      await gw?.close();
    });

    const imagine = async (prompt: string, extra: JsonRecord = {}, as = key): Promise<string> => String((await postOk(gw, '/v1/imagegen/imagine', as, { prompt, ...extra })).body.id);

    test('an image task made with the user\'s key is listed with kind, model, status, cost and its result once done', async () => {
      const id = await imagine('a lighthouse at dawn');
      const listed = await session.call<Page<TaskView>>('GET', '/tasks');
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      const row = listed.body.data.find((task) => task.id === id);
      assert.ok(row, 'the task is listed');
      assert.deepEqual(
        { kind: row.kind, type: row.type, model: row.model, status: row.status, prompt: row.prompt, cost: row.cost, paidBy: row.paidBy, result: row.result, createdAt: row.createdAt },
        { kind: 'imagine', type: 'imagine', model: 'gpt-image-1', status: 'idle', prompt: 'a lighthouse at dawn', cost: '0.04', paidBy: { type: 'user', id: owner.userId }, result: null, createdAt: '2026-11-01T00:00:00.000Z' },
      );

      await gw.app.services.runner.runDue();
      const done = await session.call<TaskView>('GET', `/tasks/${id}`);
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.status, 'done');
      assert.equal(done.body.result?.files.length, 4, 'imagine makes four images');
      for (const file of done.body.result!.files) {
        assert.equal(file.contentType, 'image/png');
        const downloaded = await download(gw, file.url);
        assert.equal(downloaded.contentType, 'image/png');
        assert.deepEqual(downloaded.data, Buffer.from(PIXEL_PNG_BASE64, 'base64'), 'the image the simulator made');
      }
      assert.deepEqual(done.body.deliveries, [], 'no webhook, no deliveries');
      assert.equal(done.body.nextDelivery, null);
    });

    test('a task\'s webhook deliveries show each attempt, its status code and the next retry', async () => {
      let calls = 0;
      const flaky = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => (++calls === 1 ? 500 : 200) });
      try {
        const id = await imagine('a lighthouse in fog', { webhook_url: flaky.url });
        const before = await session.call<TaskView>('GET', `/tasks/${id}`);
        assert.equal(before.body.webhookUrl, flaky.url);
        assert.deepEqual(before.body.deliveries, []);
        assert.equal(before.body.nextDelivery, null, 'nothing to deliver before the task ends');

        await gw.app.services.runner.runDue();
        const failed = await session.call<TaskView>('GET', `/tasks/${id}`);
        assert.deepEqual(failed.body.deliveries?.map((entry) => [entry.attempt, entry.event, entry.status, entry.httpStatus]), [[1, 'task.done', 'failed', 500]]);
        assert.deepEqual(failed.body.nextDelivery, { at: new Date(gw.clock.now() + 5_000).toISOString(), running: false }, 'retried about 5 s later');

        await advanceAndRun(gw, 5_000);
        const delivered = await session.call<TaskView>('GET', `/tasks/${id}`);
        assert.deepEqual(delivered.body.deliveries?.map((entry) => [entry.attempt, entry.status, entry.httpStatus]), [[1, 'failed', 500], [2, 'delivered', 200]]);
        assert.equal(delivered.body.nextDelivery, null);
        assert.equal(flaky.received.length, 2);
      } finally {
        await flaky.close();
      }
    });

    test('filters by status, pages by cursor; a bad status or cursor is a 400', async () => {
      const someone = await createCustomer(gw, { balance: '5.00' });
      const someoneSession = await signIn(gw, someone);
      const { key: someoneKey } = await gw.fundedKey({ userId: someone.userId });
      const finished = await imagine('finished first', {}, someoneKey);
      await gw.app.services.runner.runDue();
      const waiting = [await imagine('waiting one', {}, someoneKey), await imagine('waiting two', {}, someoneKey)];

      const idle = await someoneSession.call<Page<TaskView>>('GET', '/tasks?status=idle');
      assert.deepEqual(idle.body.data.map((task) => task.id), [...waiting].reverse());
      const done = await someoneSession.call<Page<TaskView>>('GET', '/tasks?status=done');
      assert.deepEqual(done.body.data.map((task) => task.id), [finished]);

      const first = await someoneSession.call<Page<TaskView>>('GET', '/tasks?limit=2');
      assert.deepEqual(first.body.data.map((task) => task.id), [waiting[1], waiting[0]]);
      assert.ok(first.body.next_cursor);
      const second = await someoneSession.call<Page<TaskView>>('GET', `/tasks?limit=2&cursor=${first.body.next_cursor}`);
      assert.deepEqual(second.body.data.map((task) => task.id), [finished]);
      assert.equal(second.body.next_cursor, null);

      expectError(await someoneSession.call('GET', '/tasks?status=finished'), 400, /^status: /);
      expectError(await someoneSession.call('GET', '/tasks?limit=101'), 400, /^limit: /);
      expectError(await someoneSession.call('GET', '/tasks?cursor=%25%25'), 400, /^cursor: /);
    });

    test('another user\'s task is a 404 and never listed; a management key sees its user\'s tasks', async () => {
      const id = await imagine('mine alone');
      expectError(await stranger.call('GET', `/tasks/${id}`), 404, /not found/);
      assert.ok(!(await stranger.call<Page<TaskView>>('GET', '/tasks?limit=100')).body.data.some((task) => task.id === id));
      expectError(await session.call('GET', '/tasks/task_doesnotexist'), 404, /not found/);

      const scripts = await managementKey(gw, owner.userId);
      const seen = await scripts.call<TaskView>('GET', `/tasks/${id}`);
      assert.equal(seen.status, 200, JSON.stringify(seen.body));
      assert.equal(seen.body.prompt, 'mine alone');
      const refused = await apiClient(gw, key)('GET', '/tasks');
      assert.equal(refused.status, 403, 'an inference key cannot use the management API');
      const anonymous = await fetch(`${gw.url}/api/v1/tasks`);
      assert.equal(anonymous.status, 401);
    });
  });
}
