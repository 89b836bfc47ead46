import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CompiledQuery, sql } from 'kysely';
import { api, chatRequests, createAssistant, newChatId, newMention, simulatedReply } from './helpers/assistants-e2e.ts';
import { asRecord, errorA, readRaw, sseData, type JsonRecord } from './helpers/e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { apiClient, createCustomer, managementKey, signIn, type Customer, type SignedInClient } from './helpers/management.ts';

interface AssistantView extends JsonRecord {
  id: string;
  mention: string;
  title: string;
  instruction?: string;
  access: { isPrivate: boolean; isFree: boolean; installPrice: string; hideSettings: boolean; orgId: string | null };
}
interface ListPage {
  object: string;
  total: number;
  data: AssistantView[];
  next_cursor: string | null;
}
interface LedgerEntry {
  kind: string;
  amount: string;
  requestId: string | null;
  keyId: string | null;
}
interface RequestRow {
  id: string;
  keyId: string;
  endpoint: string;
  model: string;
  status: number;
  cost: string;
  input_tokens: number;
  output_tokens: number;
}

const CARD_FIELDS = ['access', 'createDate', 'description', 'id', 'isInstalled', 'likes', 'mention', 'modelId', 'object', 'owner', 'picture', 'subtitle', 'title', 'updateDate'];
const NOT_FOUND = { message: 'Assistant not found', type: 'invalid_request_error', param: null, code: null };

/** A signed-in customer who also holds an inference key (as the same person uses the API from a script). */
interface Person extends Customer {
  client: SignedInClient;
  key: string;
}

/** DESIGN §11's assistant doors of the management API: the console's own list, the public search and page, the billed chat. */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`assistants through the management API (${database})`, () => {
    let gw: TestGateway;
    let ada: Person;
    let bob: Person;

    const person = async (name: string, balance = '10.00'): Promise<Person> => {
      const customer = await createCustomer(gw, { name, balance });
      const { key } = await gw.fundedKey({ userId: customer.userId });
      return { ...customer, client: await signIn(gw, customer), key };
    };
    /** A raw call with the session (cookie + CSRF), for headers and streams. */
    const sessionFetch = (who: Person, method: string, path: string, body?: unknown): Promise<Response> =>
      fetch(`${gw.url}/api/v1${path}`, {
        method,
        headers: { cookie: who.client.cookie, 'x-csrf-token': who.client.csrfToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const create = async (who: Person, fields: JsonRecord): Promise<AssistantView> => {
      const created = await who.client.call<AssistantView>('POST', '/assistants', fields);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body;
    };
    const ledgerOf = async (who: Person): Promise<LedgerEntry[]> => {
      await gw.app.services.book.flush();
      const entries = await who.client.call<{ data: LedgerEntry[] }>('GET', '/ledger?limit=100');
      assert.equal(entries.status, 200, JSON.stringify(entries.body));
      return entries.body.data;
    };

    before(async () => {
      gw = await startTestGateway({ database });
      ada = await person('Ada Lovelace');
      bob = await person('Bob');
    });
    after(async () => {
      await gw?.close();
    });

    test('an assistant made in the console is the same user’s as one made with their key: each door lists both, with every field', async () => {
      const mention = newMention('console');
      const made = await create(ada, { mention, title: 'Console made', subtitle: 'From the web', description: 'Answers about the console', instruction: 'Be brief.', modelId: 'gpt-4o-mini', temperature: 0.3 });
      assert.equal(made.instruction, 'Be brief.');
      assert.equal(made.temperature, '0.3');
      assert.deepEqual(made.apiFunctions, []);
      assert.deepEqual(made.access, { isPrivate: true, isFree: true, installPrice: '0', hideSettings: false, orgId: null }, 'private to its owner, no organisation');
      const byKey = await createAssistant(gw, ada.key, { mention: newMention('keymade'), title: 'Key made', modelId: 'gpt-4o-mini' });

      const spec = await api(gw, 'GET', '/v1/assistant/list', ada.key);
      assert.deepEqual((spec.body.data as JsonRecord[]).map((item) => item.id), [byKey.id, made.id], 'the key lists the console’s assistant');
      const own = await ada.client.call<ListPage>('GET', '/assistants');
      assert.equal(own.status, 200);
      assert.deepEqual(own.body.data.map((item) => item.id), [byKey.id, made.id], 'the console lists the key’s assistant');
      assert.equal(own.body.total, 2);
      assert.equal(own.body.next_cursor, null);
      assert.deepEqual(own.body.data, spec.body.data, 'the items are SPEC 4.5’s list items');

      const one = await ada.client.call<AssistantView>('GET', `/assistants/${made.id}`);
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, made, 'the edit view has every field, instruction and functions included');
    });

    test('PATCH changes only what is sent (access merged per field); list paging uses opaque cursors; a management key works too', async () => {
      const made = await create(ada, { mention: newMention('patch'), title: 'Before', description: 'kept', modelId: 'gpt-4o-mini', access: { isFree: false, installPrice: '2.50' } });
      const patched = await ada.client.call<AssistantView>('PATCH', `/assistants/${made.id}`, { title: 'After', access: { isPrivate: false }, database: null, mcp: [] });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.title, 'After');
      assert.equal(patched.body.description, 'kept');
      assert.deepEqual(patched.body.access, { isPrivate: false, isFree: false, installPrice: '2.50', hideSettings: false, orgId: null });

      const first = await ada.client.call<ListPage>('GET', '/assistants?limit=2');
      assert.equal(first.body.data.length, 2);
      assert.ok(first.body.next_cursor);
      const rest = await ada.client.call<ListPage>('GET', `/assistants?limit=2&cursor=${first.body.next_cursor}`);
      assert.equal(rest.body.data.length, first.body.total - 2);
      assert.equal(new Set([...first.body.data, ...rest.body.data].map((item) => item.id)).size, first.body.total);
      const filtered = await ada.client.call<ListPage>('GET', '/assistants?query=AFTER');
      assert.deepEqual(filtered.body.data.map((item) => item.id), [made.id]);

      const scripts = await managementKey(gw, ada.userId);
      const viaKey = await scripts.call<ListPage>('GET', '/assistants?query=after');
      assert.equal(viaKey.status, 200);
      assert.deepEqual(viaKey.body.data.map((item) => item.id), [made.id]);
    });

    test('another user’s assistant is 404 on every door; its public card is visible, its private one is not', async () => {
      const secret = await create(bob, { mention: newMention('bobsecret'), title: 'Secret', instruction: 'hidden words', modelId: 'gpt-4o-mini' });
      const open = await create(bob, { mention: newMention('bobopen'), title: 'Open', instruction: 'also hidden', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
      for (const target of [secret, open]) {
        for (const [method, path, body] of [['GET', `/assistants/${target.id}`], ['PATCH', `/assistants/${target.id}`, { title: 'Mine now' }], ['DELETE', `/assistants/${target.id}`]] as const) {
          const answer = await ada.client.call(method, path, body);
          assert.equal(answer.status, 404, `${method} ${path}`);
          assert.deepEqual(errorA(answer.body), NOT_FOUND);
        }
      }
      const hiddenChat = await ada.client.call('POST', `/assistants/${secret.id}/chat`, { chatId: newChatId(), message: 'hello?' });
      assert.equal(hiddenChat.status, 404);
      assert.deepEqual(errorA(hiddenChat.body), NOT_FOUND);
      assert.equal((await api(gw, 'GET', `/api/v1/assistants/by-mention/${secret.mention}`, undefined)).status, 404, 'signed out');
      assert.equal((await ada.client.call('GET', `/assistants/by-mention/${secret.mention}`)).status, 404, 'another user');
      const own = await bob.client.call<JsonRecord>('GET', `/assistants/by-mention/${secret.mention}`);
      assert.equal(own.status, 200, 'its owner sees the page of a private assistant');

      const card = await api(gw, 'GET', `/api/v1/assistants/by-mention/${open.mention.toUpperCase()}`, undefined);
      assert.equal(card.status, 200, card.text);
      assert.deepEqual(Object.keys(card.body).sort(), [...CARD_FIELDS, 'isLiked'].sort(), "the public card and whether the viewer liked it");
      assert.equal(card.body.id, open.id);
      assert.deepEqual(card.body.owner, { id: bob.userId, name: 'Bob' });
      assert.deepEqual(card.body.access, { isPrivate: false, isFree: true, installPrice: '0' });
      assert.equal(card.text.includes('also hidden'), false, 'no instruction on a card');
      const bobAfter = await bob.client.call<AssistantView>('GET', `/assistants/${open.id}`);
      assert.equal(bobAfter.body.title, 'Open', 'nothing changed');
    });

    test('a session without its CSRF token is refused (403) and changes nothing; an inference key is refused (403)', async () => {
      const mention = newMention('nocsrf');
      const created = await ada.client.withoutCsrf('POST', '/assistants', { mention, title: 'No CSRF', modelId: 'gpt-4o-mini' });
      assert.equal(created.status, 403);
      assert.equal(errorA(created.body).code, 'csrf_failed');
      assert.equal((await api(gw, 'GET', `/api/v1/assistants/by-mention/${mention}`, undefined)).status, 404, 'not created');

      const made = await create(ada, { mention: newMention('csrf'), title: 'Guarded', modelId: 'gpt-4o-mini' });
      const mark = gw.simulator.requests.length;
      for (const [method, path, body] of [
        ['PATCH', `/assistants/${made.id}`, { title: 'Changed' }],
        ['DELETE', `/assistants/${made.id}`, undefined],
        ['POST', `/assistants/${made.id}/chat`, { chatId: newChatId(), message: 'hi' }],
      ] as const) {
        const answer = await ada.client.withoutCsrf(method, path, body);
        assert.equal(answer.status, 403, `${method} ${path}`);
        assert.equal(errorA(answer.body).type, 'permission_error');
      }
      assert.equal(chatRequests(gw, mark).length, 0, 'no model was called');
      assert.equal((await ada.client.call<AssistantView>('GET', `/assistants/${made.id}`)).body.title, 'Guarded');

      const inference = await apiClient(gw, ada.key)('GET', '/assistants');
      assert.equal(inference.status, 403);
      assert.equal(errorA(inference.body).code, 'wrong_key_scope');
      assert.equal((await api(gw, 'GET', '/api/v1/assistants', undefined)).status, 401, 'the own list needs a session');
    });

    test('bad input is a 4xx in shape A naming the field, never a 500', async () => {
      const made = await create(ada, { mention: newMention('bad'), title: 'Valid', modelId: 'gpt-4o-mini' });
      const cases: Array<[string, string, unknown, number, string]> = [
        ['POST', '/assistants', { title: 'A title that is far too long', modelId: 'gpt-4o-mini' }, 400, 'title: must be at most 16 characters'],
        ['POST', '/assistants', { title: 'No model' }, 400, 'modelId: is required'],
        ['POST', '/assistants', { title: 'Odd model', modelId: 'no-such-model' }, 400, "modelId: 'no-such-model' is not a text model of /v1/models"],
        ['POST', '/assistants', { title: 'Hot', modelId: 'gpt-4o-mini', temperature: 1.5 }, 400, 'temperature: must be between 0 and 1'],
        ['POST', '/assistants', { title: 'Taken', modelId: 'gpt-4o-mini', mention: made.mention }, 409, `mention: '${made.mention}' is already taken`],
        ['POST', '/assistants', { title: 'KB', modelId: 'gpt-4o-mini', database: { id: 'kb_notmine' } }, 400, "database.id: 'kb_notmine' is not one of your knowledge bases"],
        ['PATCH', `/assistants/${made.id}`, { subtitle: 'x'.repeat(33) }, 400, 'subtitle: must be at most 32 characters'],
        ['PATCH', `/assistants/${made.id}`, { access: { orgId: 'org_notmine' } }, 400, 'access.orgId: must be an organization you belong to'],
        ['GET', '/assistants?limit=101', undefined, 400, 'limit: Too big: expected number to be <=100'],
        ['GET', '/assistants?cursor=nonsense', undefined, 400, 'cursor: is not a cursor this list gave'],
        ['POST', `/assistants/${made.id}/chat`, { chatId: 'short', message: 'hi' }, 400, 'chatId: must be 24 to 36 characters'],
        ['POST', `/assistants/${made.id}/chat`, { chatId: newChatId() }, 400, 'message: is required'],
      ];
      for (const [method, path, body, status, message] of cases) {
        const answer = await ada.client.call(method, path, body);
        assert.equal(answer.status, status, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`);
        const error = errorA(answer.body);
        assert.equal(error.message, message);
        assert.equal(error.type, 'invalid_request_error');
      }
      const search = await api(gw, 'GET', '/api/v1/assistants/search?limit=31', undefined);
      assert.equal(search.status, 400);
      assert.equal(errorA(search.body).param, 'limit');
    });

    test('search works signed out with SPEC 4.6 semantics, and answers what /v1/assistant/search answers a stranger', async () => {
      const carol = await person('Carol');
      const tag = newMention('zebra').replace('-', '');
      const shown = await create(carol, { mention: `${tag}-public`, title: 'Zebra helper', description: 'Finds zebras', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
      await create(carol, { mention: `${tag}-private`, title: 'Zebra secret', modelId: 'gpt-4o-mini' });

      const anonymous = await api(gw, 'GET', `/api/v1/assistants/search?query=${tag}`, undefined);
      assert.equal(anonymous.status, 200, anonymous.text);
      assert.deepEqual(Object.keys(anonymous.body).sort(), ['data', 'limit', 'object', 'offset', 'total']);
      const cards = anonymous.body.data as JsonRecord[];
      assert.deepEqual(cards.map((card) => card.id), [shown.id], 'public ones only');
      assert.deepEqual(Object.keys(cards[0]!).sort(), CARD_FIELDS);
      assert.deepEqual(cards[0]!.owner, { id: carol.userId, name: 'Carol' });

      const stranger = await gw.fundedKey();
      const spec = await api(gw, 'GET', `/v1/assistant/search?query=${tag}`, stranger.key);
      assert.deepEqual(anonymous.body, spec.body, 'the same search as the SPEC endpoint');
      const strict = await api(gw, 'GET', `/api/v1/assistants/search?query=@${tag}`, undefined);
      assert.equal(strict.body.total, 0, '`@` matches a whole code only');
      const exact = await api(gw, 'GET', `/api/v1/assistants/search?query=@${tag}-public`, undefined);
      assert.deepEqual((exact.body.data as JsonRecord[]).map((card) => card.id), [shown.id]);
      const owner = await carol.client.call<{ data: JsonRecord[] }>('GET', `/assistants/search?query=${tag}`);
      assert.deepEqual(owner.body.data.map((card) => card.id), [shown.id], 'a private assistant without an org stays out of the catalog, for its owner too');
    });

    test('chat from the console: SPEC 2.5’s answer, charged once to the signed-in user — ledger, request log and x-tollgate-cost agree', async () => {
      const made = await create(ada, { mention: newMention('chat'), title: 'Chatty', instruction: 'Answer briefly.', modelId: 'gpt-4o-mini' });
      const before = micros(await gw.balance({ userId: ada.userId }));
      const chargesBefore = (await ledgerOf(ada)).filter((entry) => entry.kind === 'charge').length;
      const chatId = newChatId();
      const message = 'What is a gateway, in one line?';
      const mark = gw.simulator.requests.length;
      const response = await sessionFetch(ada, 'POST', `/assistants/${made.id}/chat`, { chatId, message });
      const raw = await readRaw(response);
      assert.equal(raw.status, 200, raw.text);
      const body = asRecord(raw.json);
      assert.equal(body.chatId, chatId);
      assert.equal(body.assistantId, made.id);
      assert.equal(body.assistantCode, made.mention);
      assert.equal(body.model, 'gpt-4o-mini');
      assert.equal(body.message, simulatedReply(gw, message));
      assert.equal(chatRequests(gw, mark).length, 1, 'one model round');
      const usage = asRecord(body.usage);
      const cost = micros(usage.total_cost as number);
      assert.ok(cost > 0n);

      const requestId = raw.headers.get('x-request-id')!;
      assert.equal(micros(raw.headers.get('x-tollgate-cost') ?? ''), cost, 'x-tollgate-cost is the charge');
      assert.equal(before - micros(await gw.balance({ userId: ada.userId })), cost, 'the user’s balance paid exactly total_cost');
      const entries = (await ledgerOf(ada)).filter((entry) => entry.kind === 'charge');
      assert.equal(entries.length, chargesBefore + 1, 'one ledger entry');
      const entry = entries.find((candidate) => candidate.requestId === requestId);
      assert.ok(entry, 'the entry carries the request id');
      assert.equal(-micros(entry.amount), cost);
      assert.equal(entry.keyId, 'console');

      await gw.app.services.requestLog.flush();
      const logged = await ada.client.call<{ data: RequestRow[] }>('GET', `/requests?limit=100`);
      const row = logged.body.data.find((candidate) => candidate.id === requestId);
      assert.ok(row, 'the chat is in the request log');
      assert.equal(row.endpoint, 'assistants.chat');
      assert.equal(row.keyId, 'console');
      assert.equal(row.model, 'gpt-4o-mini');
      assert.equal(row.status, 200);
      assert.equal(micros(row.cost), cost, 'the request log’s cost is the ledger’s');
      assert.equal(row.input_tokens, usage.prompt_tokens);
      assert.equal(row.output_tokens, usage.completion_tokens);
    });

    test('a streamed console chat sends delta frames, the whole answer and [DONE], costs what the plain one costs, and remembers the chat', async () => {
      const made = await create(ada, { mention: newMention('stream'), title: 'Streamer', modelId: 'gpt-4o-mini' });
      const message = 'Tell me about streams.';
      const plainBefore = micros(await gw.balance({ userId: ada.userId }));
      const plain = await ada.client.call<JsonRecord>('POST', `/assistants/${made.id}/chat`, { chatId: newChatId(), message });
      assert.equal(plain.status, 200);
      const plainCost = plainBefore - micros(await gw.balance({ userId: ada.userId }));

      const chatId = newChatId();
      const before = micros(await gw.balance({ userId: ada.userId }));
      const streamed = await readRaw(await sessionFetch(ada, 'POST', `/assistants/${made.id}/chat`, { chatId, message, stream: true }));
      assert.equal(streamed.status, 200);
      assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
      const payloads = sseData(streamed.text);
      assert.equal(payloads.at(-1), '[DONE]');
      const frames = payloads.slice(0, -1).map((payload) => asRecord(JSON.parse(payload)));
      const deltas = frames.slice(0, -1);
      assert.ok(deltas.length >= 2, 'the reply arrives in pieces');
      assert.equal(deltas.map((frame) => frame.delta).join(''), plain.body.message);
      assert.equal(frames.at(-1)!.message, plain.body.message);
      assert.equal(before - micros(await gw.balance({ userId: ada.userId })), plainCost, 'charged the same as without stream');

      const mark = gw.simulator.requests.length;
      const next = await ada.client.call<JsonRecord>('POST', `/assistants/${made.id}/chat`, { chatId, message: 'And then?', maxContext: 10 });
      assert.equal(next.status, 200);
      const sent = asRecord(chatRequests(gw, mark)[0]!.json).messages as JsonRecord[];
      assert.deepEqual(sent.map((item) => item.content), [message, plain.body.message, 'And then?'], 'the chat’s earlier exchange went with the new message');
    });

    test('like and install from the console: once per user, a paid install charged once to the user; CSRF, 404 and 402 as every door', async () => {
      const owner = await person('Owner');
      const paid = await create(owner, { mention: newMention('paid'), title: 'Paid helper', modelId: 'gpt-4o-mini', access: { isPrivate: false, isFree: false, installPrice: '1.25' } });
      const hidden = await create(owner, { mention: newMention('hide'), title: 'Hidden', modelId: 'gpt-4o-mini', access: { isPrivate: true } });
      const fan = await person('Fan', '5.00');
      type Card = AssistantView & { likes: number; isInstalled: boolean; isLiked: boolean; charged?: string };

      const liked = await fan.client.call<Card>('POST', `/assistants/${paid.id}/like`);
      assert.equal(liked.status, 200, JSON.stringify(liked.body));
      assert.deepEqual([liked.body.likes, liked.body.isInstalled, liked.body.isLiked], [1, false, true]);
      assert.deepEqual(Object.keys(liked.body).sort(), [...CARD_FIELDS, 'isLiked'].sort(), 'the public card and whether the viewer liked it, nothing more');
      assert.equal((await bob.client.call<Card>('GET', `/assistants/by-mention/${paid.mention}`)).body.isLiked, false, 'not liked by another user yet');
      assert.equal((await fan.client.call<Card>('POST', `/assistants/${paid.id}/like`)).body.likes, 1, 'a second like counts nothing');
      assert.equal((await bob.client.call<Card>('POST', `/assistants/${paid.id}/like`)).body.likes, 2, 'another user counts');

      const installed = await fan.client.call<Card>('POST', `/assistants/${paid.id}/install`);
      assert.equal(installed.status, 200, JSON.stringify(installed.body));
      assert.deepEqual([installed.body.isInstalled, installed.body.charged], [true, '1.25']);
      const again = await fan.client.call<Card>('POST', `/assistants/${paid.id}/install`);
      assert.deepEqual([again.status, again.body.charged], [200, '0.00'], 'installed once, charged once');
      assert.equal(await gw.balance({ userId: fan.userId }), '3.75');
      const charges = (await ledgerOf(fan)).filter((entry) => entry.kind === 'charge');
      assert.deepEqual(charges.map((entry) => entry.amount), ['-1.25']);
      const page = await fan.client.call<Card>('GET', `/assistants/by-mention/${paid.mention}`);
      assert.deepEqual([page.body.isInstalled, page.body.likes, page.body.isLiked], [true, 2, true]);
      const signedOut = (await (await fetch(`${gw.url}/api/v1/assistants/by-mention/${paid.mention}`)).json()) as Card;
      assert.deepEqual([signedOut.isLiked, signedOut.isInstalled], [false, false], 'signed out: neither');

      // The same refusals as the other doors: no CSRF token, another user's private assistant, an empty balance.
      for (const action of ['like', 'install']) {
        const noCsrf = await fan.client.withoutCsrf('POST', `/assistants/${paid.id}/${action}`);
        assert.deepEqual([noCsrf.status, errorA(noCsrf.body).code], [403, 'csrf_failed'], action);
        const inference = await apiClient(gw, fan.key)('POST', `/assistants/${paid.id}/${action}`);
        assert.deepEqual([inference.status, errorA(inference.body).code], [403, 'wrong_key_scope'], `an inference key cannot ${action} here`);
        const tooLong = await fan.client.call('POST', `/assistants/${'a'.repeat(201)}/${action}`);
        assert.equal(tooLong.status, 400, `${action}: an id past the router's 100 characters`);
        assert.equal(errorA(tooLong.body).type, 'invalid_request_error');
      }
      assert.equal(await gw.balance({ userId: fan.userId }), '3.75', 'none of the refused calls charged anything');
      assert.equal((await fan.client.call<Card>('GET', `/assistants/by-mention/${paid.mention}`)).body.likes, 2, 'nor liked again');
      for (const action of ['like', 'install']) {
        const missing = await fan.client.call('POST', `/assistants/${hidden.id}/${action}`);
        assert.deepEqual([missing.status, errorA(missing.body)], [404, NOT_FOUND]);
      }
      const broke = await person('Broke fan', '0.00');
      const refused = await broke.client.call('POST', `/assistants/${paid.id}/install`);
      assert.equal(refused.status, 402);
      assert.equal(errorA(refused.body).type, 'insufficient_balance_error');
      assert.equal((await broke.client.call<Card>('GET', `/assistants/by-mention/${paid.mention}`)).body.isInstalled, false);
      assert.equal((await ledgerOf(broke)).length, 0);
    });

    test('an empty balance is refused with 402 before the vendor is called, and nothing is charged', async () => {
      const broke = await person('Broke', '0.00');
      const made = await create(broke, { mention: newMention('broke'), title: 'Unpaid', modelId: 'gpt-4o-mini' });
      const mark = gw.simulator.requests.length;
      const refused = await broke.client.call('POST', `/assistants/${made.id}/chat`, { chatId: newChatId(), message: 'Will you answer?' });
      assert.equal(refused.status, 402);
      const error = errorA(refused.body);
      assert.equal(error.type, 'insufficient_balance_error');
      assert.equal(error.message, 'Balance is too low to use API');
      assert.equal(gw.simulator.requests.length, mark, 'the vendor got nothing');
      assert.equal(await gw.balance({ userId: broke.userId }), '0.00');
      assert.equal((await ledgerOf(broke)).filter((entry) => entry.kind === 'charge').length, 0);
    });

    test('a public assistant of someone else answers a signed-in user, charged to that user; delete frees the code and ends the chat', async () => {
      const open = await create(bob, { mention: newMention('shared'), title: 'Shared', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
      const adaBefore = micros(await gw.balance({ userId: ada.userId }));
      const bobBefore = micros(await gw.balance({ userId: bob.userId }));
      const answered = await ada.client.call<{ usage: { total_cost: number } }>('POST', `/assistants/${open.id}/chat`, { chatId: newChatId(), message: 'Hello Bob’s assistant' });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      assert.equal(adaBefore - micros(await gw.balance({ userId: ada.userId })), micros(answered.body.usage.total_cost), 'the one who chats pays');
      assert.equal(micros(await gw.balance({ userId: bob.userId })), bobBefore, 'the owner pays nothing');

      const deleted = await bob.client.call('DELETE', `/assistants/${open.id}`);
      assert.equal(deleted.status, 200);
      assert.deepEqual(deleted.body, { id: open.id, object: 'assistant', deleted: true });
      assert.equal((await bob.client.call('GET', `/assistants/${open.id}`)).status, 404);
      assert.equal((await api(gw, 'GET', `/api/v1/assistants/by-mention/${open.mention}`, undefined)).status, 404);
      const gone = await api(gw, 'POST', '/v1/assistant/chat', bob.key, { chatId: newChatId(), assistantCode: open.mention, message: 'still there?' });
      assert.equal(gone.status, 404);
      assert.equal((await bob.client.call('DELETE', `/assistants/${open.id}`)).status, 404, 'a second delete finds nothing');
      await create(ada, { mention: open.mention, title: 'Reused code', modelId: 'gpt-4o-mini' });
    });

    test('deleting an assistant finds its chat messages by index (migration 0027), not by reading every message', async () => {
      const doomed = await create(bob, { mention: newMention('doomed'), title: 'Doomed', modelId: 'gpt-4o-mini' });
      const answered = await bob.client.call('POST', `/assistants/${doomed.id}/chat`, { chatId: newChatId(), message: 'Hello before the end' });
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      const seen = gw.queries.length;
      assert.equal((await bob.client.call('DELETE', `/assistants/${doomed.id}`)).status, 200);
      const statement = gw.queries.slice(seen).find((text) => /^delete from "chat_messages"/i.test(text));
      assert.ok(statement, 'the delete removes the chat messages');
      // The plan of that very statement; PostgreSQL is told to avoid sequential scans, which it still uses when no index fits.
      const plan = await gw.storage.db.transaction().execute(async (trx) => {
        if (gw.storage.engine === 'postgres') await sql`SET LOCAL enable_seqscan = off`.execute(trx);
        const explain = gw.storage.engine === 'postgres' ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN';
        const rows = await trx.executeQuery(CompiledQuery.raw(`${explain} ${statement}`, [doomed.id]));
        return rows.rows.map((row) => Object.values(row as JsonRecord).join(' ')).join('\n');
      });
      assert.match(plan, /chat_messages_assistant/, plan);
    });

    test('an organisation’s admin edits the org’s assistant from the console; a plain member may chat with it but not edit it', async () => {
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: ada.userId, balance: '5.00' });
      assert.equal(org.status, 200);
      const member = await person('Mia Member');
      const admin = await person('Adam Admin');
      for (const [who, role] of [[member, 'member'], [admin, 'admin']] as const) {
        assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: who.userId, role })).status, 200);
      }
      const shared = await create(ada, { mention: newMention('orgbot'), title: 'Org helper', modelId: 'gpt-4o-mini', access: { orgId: org.body.id } });
      assert.equal(shared.access.orgId, org.body.id);
      assert.equal(shared.access.isPrivate, true);

      const edited = await admin.client.call<AssistantView>('PATCH', `/assistants/${shared.id}`, { subtitle: 'Edited by the admin' });
      assert.equal(edited.status, 200, JSON.stringify(edited.body));
      assert.equal((await member.client.call('PATCH', `/assistants/${shared.id}`, { subtitle: 'Member edit' })).status, 404);
      assert.equal((await member.client.call('GET', `/assistants/by-mention/${shared.mention}`)).status, 200, 'members see the page');
      const memberBefore = micros(await gw.balance({ userId: member.userId }));
      const chat = await member.client.call<{ usage: { total_cost: number } }>('POST', `/assistants/${shared.id}/chat`, { chatId: newChatId(), message: 'Hi team bot' });
      assert.equal(chat.status, 200);
      assert.equal(memberBefore - micros(await gw.balance({ userId: member.userId })), micros(chat.body.usage.total_cost), 'charged to the member personally, not the org');
      assert.equal(await gw.balance({ orgId: org.body.id }), '5.00');
      const found = await member.client.call<{ data: JsonRecord[] }>('GET', `/assistants/search?query=@${shared.mention}`);
      assert.deepEqual(found.body.data.map((card) => card.id), [shared.id], 'a signed-in member finds the org’s private assistant');
      assert.equal((await api(gw, 'GET', `/api/v1/assistants/search?query=@${shared.mention}`, undefined)).body.total, 0, 'signed-out visitors do not');
    });

    test('signed-out searches are limited per address (429 with retry-after); a signed-in user still searches', async () => {
      let refused: Awaited<ReturnType<typeof readRaw>> | undefined;
      for (let count = 1; count <= 61 && !refused; count += 1) {
        const response = await readRaw(await fetch(`${gw.url}/api/v1/assistants/search`));
        if (response.status === 429) refused = response;
        else assert.equal(response.status, 200);
      }
      assert.ok(refused, 'the 61st search in a minute at the latest is refused');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1);
      assert.equal(errorA(refused.json).type, 'rate_limit_error');
      assert.equal((await ada.client.call('GET', '/assistants/search')).status, 200, 'signed in: not counted');
    });
  });
}
