import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { charges, errorA, ledger, userWithOrg, type JsonRecord } from './helpers/e2e.ts';
import { addMember, api, createAssistant, items, newChatId, newMention, newUser } from './helpers/assistants-e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';

const iso = (ms: number): string => new Date(ms).toISOString();
const mcpServer = { url: 'https://mcp.example.com/mcp', name: 'docs', headers: { 'x-team': 'blue' }, allowedTools: ['search'] };
const fn = (name: string): JsonRecord => ({
  name,
  description: `Calls ${name}`,
  parameters: { type: 'object', properties: { city: { type: 'string' } } },
  url: `https://api.example.com/${name}`,
  method: 'POST',
  headers: { 'x-api': 'k' },
});
const CARD_FIELDS = ['access', 'createDate', 'description', 'id', 'isInstalled', 'likes', 'mention', 'modelId', 'object', 'owner', 'picture', 'subtitle', 'title', 'updateDate'];

describe('assistants: create, update, list, catalog search, likes and installs', () => {
  let gw: TestGateway;
  let owner: { userId: string; key: string };
  let kb1: string;
  let kb2: string;

  const search = async (key: string, query: string, extra = ''): Promise<JsonRecord[]> => {
    const found = await api(gw, 'GET', `/v1/assistant/search?query=${encodeURIComponent(query)}${extra}`, key);
    assert.equal(found.status, 200, found.text);
    return items(found.body);
  };
  const database = async (key: string, title: string): Promise<string> => {
    const created = await api(gw, 'POST', '/v1/database/create', key, { title });
    assert.equal(created.status, 200, created.text);
    return String(created.body.id);
  };

  before(async () => {
    gw = await startTestGateway();
    owner = await newUser(gw, '10.00', 'Olga Owner');
    kb1 = await database(owner.key, 'Handbook');
    kb2 = await database(owner.key, 'Price list');
    const plain = await gw.admin('PUT', '/models/plain-model', { kind: 'chat', provider: 'openai', vision: false, cost_context: '0.0010', cost_completion: '0.0020' });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
  });
  after(async () => {
    await gw?.close();
  });

  test('create returns the whole assistant of SPEC 2.6: temperature as text, ISO dates, instruction and apiFunctions', async () => {
    const mention = newMention('full');
    const sent = {
      mention,
      title: 'Helper',
      subtitle: 'Answers questions',
      description: 'Helps with the handbook',
      picture: 'https://img.example.com/a.png',
      instruction: 'You are terse.',
      modelId: 'gpt-4o-mini',
      temperature: 0.3,
      sqlStore: false,
      access: { isPrivate: false, isFree: true, installPrice: '0', hideSettings: true, orgId: null },
      database: { id: kb1, requestFrequency: 'always', chunks: 4 },
      mcp: [mcpServer],
      apiFunctions: [fn('weather')],
    };
    const created = await createAssistant(gw, owner.key, sent);
    assert.equal(created.object, 'assistant');
    assert.equal(typeof created.id, 'string');
    assert.equal(created.createDate, iso(gw.clock.now()));
    assert.equal(created.updateDate, iso(gw.clock.now()));
    for (const field of ['mention', 'title', 'subtitle', 'description', 'picture', 'instruction', 'modelId', 'sqlStore'] as const) assert.deepEqual(created[field], sent[field], field);
    assert.equal(created.temperature, '0.3');
    assert.deepEqual(created.access, sent.access);
    assert.deepEqual(created.database, sent.database);
    assert.deepEqual(created.mcp, sent.mcp);
    assert.deepEqual(created.apiFunctions, sent.apiFunctions);

    const minimal = await createAssistant(gw, owner.key, { title: 'Bare', modelId: 'gpt-4o-mini' });
    assert.equal(minimal.picture, '', 'no picture is an empty string');
    assert.equal(typeof minimal.mention, 'string');
    assert.ok(String(minimal.mention).length > 0, 'a code is given when none is sent');
    assert.equal(typeof minimal.temperature, 'string');
    assert.equal(minimal.instruction, '');
    assert.deepEqual(minimal.apiFunctions, []);
    assert.deepEqual(minimal.mcp, []);
    assert.equal(minimal.database, null);
  });

  test('create validation: 400 shape A `<param>: <constraint>` for title > 16, subtitle > 32, temperature 1.5, an unknown model', async () => {
    const cases: Array<[string, JsonRecord]> = [
      ['title', { title: 'x'.repeat(17) }],
      ['subtitle', { subtitle: 'y'.repeat(33) }],
      ['temperature', { temperature: 1.5 }],
      ['modelId', { modelId: 'no-such-model' }],
    ];
    for (const [param, change] of cases) {
      const response = await api(gw, 'POST', '/v1/assistant/create', owner.key, { title: 'Valid', modelId: 'gpt-4o-mini', ...change });
      assert.equal(response.status, 400, `${param}: ${response.text}`);
      const error = errorA(response.body);
      assert.equal(error.type, 'invalid_request_error');
      assert.equal(error.param, param);
      assert.ok(error.message.startsWith(`${param}: `), error.message);
    }
    const exact = await api(gw, 'POST', '/v1/assistant/create', owner.key, { title: 'x'.repeat(16), subtitle: 'y'.repeat(32), temperature: 1, modelId: 'gpt-4o-mini' });
    assert.equal(exact.status, 200, 'the limits themselves are allowed');
  });

  test('a taken mention is a 409 conflict', async () => {
    const mention = newMention('dup');
    await createAssistant(gw, owner.key, { mention, title: 'First', modelId: 'gpt-4o-mini' });
    const other = await newUser(gw);
    const again = await api(gw, 'POST', '/v1/assistant/create', other.key, { mention, title: 'Second', modelId: 'gpt-4o-mini' });
    assert.equal(again.status, 409, again.text);
    assert.equal(errorA(again.body).type, 'invalid_request_error');
    assert.ok(errorA(again.body).message.includes(mention), errorA(again.body).message);
  });

  test('update: only sent fields change, access merged per field, database/mcp/apiFunctions replaced whole', async () => {
    const created = await createAssistant(gw, owner.key, {
      mention: newMention('upd'),
      title: 'Before',
      instruction: 'Old instruction',
      modelId: 'gpt-4o-mini',
      temperature: 0.5,
      access: { isPrivate: false, isFree: true, installPrice: '2.00', hideSettings: true },
      database: { id: kb1, requestFrequency: 'always', chunks: 5 },
      mcp: [mcpServer],
      apiFunctions: [fn('one'), fn('two')],
    });
    const update = async (fields: JsonRecord): Promise<JsonRecord> => {
      const response = await api(gw, 'POST', '/v1/assistant/update', owner.key, { id: created.id, ...fields });
      assert.equal(response.status, 200, response.text);
      return response.body;
    };
    gw.clock.advance(60_000);
    const merged = await update({ access: { isFree: false } });
    assert.deepEqual(merged.access, { isPrivate: false, isFree: false, installPrice: '2.00', hideSettings: true, orgId: null });
    for (const field of ['title', 'instruction', 'modelId', 'temperature', 'database', 'mcp', 'apiFunctions', 'createDate', 'mention']) assert.deepEqual(merged[field], created[field], field);
    assert.equal(merged.updateDate, iso(gw.clock.now()));

    assert.deepEqual((await update({ apiFunctions: [fn('three')] })).apiFunctions, [fn('three')]);
    const relinked = await update({ database: { id: kb2, requestFrequency: 'auto', chunks: 2 } });
    assert.deepEqual(relinked.database, { id: kb2, requestFrequency: 'auto', chunks: 2 });
    assert.equal((await update({ database: null })).database, null);
    const emptied = await update({ mcp: [], temperature: 0.9, instruction: 'New instruction' });
    assert.deepEqual(emptied.mcp, []);
    assert.equal(emptied.temperature, '0.9');
    assert.equal(emptied.instruction, 'New instruction');
    assert.equal(emptied.title, 'Before');
    assert.deepEqual(emptied.apiFunctions, [fn('three')]);
    assert.deepEqual(emptied.access, merged.access);
  });

  test('changing the mention changes the chat code: the old code is 404, the new one answers', async () => {
    const first = newMention('code-old');
    const created = await createAssistant(gw, owner.key, { mention: first, title: 'Coder', modelId: 'gpt-4o-mini' });
    const second = newMention('code-new');
    const updated = await api(gw, 'POST', '/v1/assistant/update', owner.key, { id: created.id, mention: second });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.mention, second);
    const old = await api(gw, 'POST', '/v1/assistant/chat', owner.key, { chatId: newChatId(), assistantCode: first, message: 'Hello' });
    assert.equal(old.status, 404, old.text);
    assert.deepEqual(old.body, { error: { message: 'Assistant not found', type: 'invalid_request_error', param: null, code: null } });
    const fresh = await api(gw, 'POST', '/v1/assistant/chat', owner.key, { chatId: newChatId(), assistantCode: second, message: 'Hello' });
    assert.equal(fresh.status, 200, fresh.text);
    assert.equal(fresh.body.assistantCode, second);
  });

  test('update rights: another user gets 404; an org admin may update an org assistant, a plain member may not', async () => {
    const { userId: orgOwner, orgId } = await userWithOrg(gw, { user: '5.00', org: '5.00' });
    const { key: ownerKey } = await gw.fundedKey({ userId: orgOwner, orgId });
    const created = await createAssistant(gw, ownerKey, { mention: newMention('org'), title: 'Corporate', modelId: 'gpt-4o-mini', access: { orgId } });
    assert.equal((created.access as JsonRecord).orgId, orgId);
    const stranger = await newUser(gw);
    const denied = await api(gw, 'POST', '/v1/assistant/update', stranger.key, { id: created.id, title: 'Hijacked' });
    assert.equal(denied.status, 404, denied.text);
    assert.equal(errorA(denied.body).message, 'Assistant not found');

    const admin = await newUser(gw);
    await addMember(gw, orgId, admin.userId, 'admin');
    const byAdmin = await api(gw, 'POST', '/v1/assistant/update', admin.key, { id: created.id, title: 'By admin' });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.equal(byAdmin.body.title, 'By admin');

    const member = await newUser(gw);
    await addMember(gw, orgId, member.userId, 'member');
    const byMember = await api(gw, 'POST', '/v1/assistant/update', member.key, { id: created.id, title: 'By member' });
    assert.equal(byMember.status, 404, byMember.text);
    const listed = items((await api(gw, 'GET', '/v1/assistant/list', ownerKey)).body).find((item) => item.id === created.id);
    assert.equal(listed?.title, 'By admin', 'the member could not change it');
  });

  test('list: the owner’s own (private included), newest first, query, paging, capabilities; free; limit 101 is 400', async () => {
    const lister = await newUser(gw, '4.00');
    const made: JsonRecord[] = [];
    const make = async (fields: JsonRecord): Promise<void> => {
      gw.clock.advance(1_000);
      made.push(await createAssistant(gw, lister.key, fields));
    };
    await make({ mention: newMention('la'), title: 'Alpha one', modelId: 'gpt-4o-mini' });
    await make({ mention: newMention('list-ALPHA'), title: 'Second', modelId: 'gpt-4o-mini', access: { isPrivate: false }, apiFunctions: [fn('lookup')] });
    await make({ mention: newMention('lc'), title: 'Third', modelId: 'gpt-4o-mini', sqlStore: true });
    const kb = await database(lister.key, 'Notes');
    await make({ mention: newMention('ld'), title: 'Fourth', modelId: 'plain-model', database: { id: kb } });
    const [c1, c2, c3, c4] = made as [JsonRecord, JsonRecord, JsonRecord, JsonRecord];
    const balanceBefore = micros(await gw.balance({ userId: lister.userId }));
    const ledgerBefore = (await ledger(gw, { userId: lister.userId })).length;

    const all = await api(gw, 'GET', '/v1/assistant/list', lister.key);
    assert.equal(all.status, 200, all.text);
    assert.equal(all.body.object, 'list');
    assert.equal(all.body.total, 4, 'only the key owner’s assistants');
    assert.equal(all.body.limit, 25);
    assert.equal(all.body.offset, 0);
    const listed = items(all.body);
    assert.deepEqual(listed.map((item) => item.id), [c4.id, c3.id, c2.id, c1.id], 'newest first');
    assert.equal((listed[3]?.access as JsonRecord).isPrivate, true, 'private ones are listed');
    for (const item of listed) {
      assert.ok(!('instruction' in item) && !('apiFunctions' in item), 'items omit instruction and apiFunctions');
      assert.equal(typeof item.capabilities, 'number');
    }
    assert.deepEqual(listed.map((item) => item.capabilities), [2, 17, 9, 1], 'knowledge base 2; SQL 16 + vision 1; functions 8 + vision 1; vision 1');

    const filtered = await api(gw, 'GET', '/v1/assistant/list?query=aLpHa', lister.key);
    assert.deepEqual(items(filtered.body).map((item) => item.id), [c2.id, c1.id], 'case-insensitive on title or code');
    assert.equal(filtered.body.total, 2);

    const page = await api(gw, 'GET', '/v1/assistant/list?limit=2&offset=1', lister.key);
    assert.deepEqual({ total: page.body.total, limit: page.body.limit, offset: page.body.offset }, { total: 4, limit: 2, offset: 1 });
    assert.deepEqual(items(page.body).map((item) => item.id), [c3.id, c2.id]);

    const tooMany = await api(gw, 'GET', '/v1/assistant/list?limit=101', lister.key);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(errorA(tooMany.body).type, 'invalid_request_error');
    assert.ok(errorA(tooMany.body).message.startsWith('limit: '), errorA(tooMany.body).message);

    await search(lister.key, 'Second');
    assert.equal(micros(await gw.balance({ userId: lister.userId })), balanceBefore, 'list and search are free');
    assert.equal((await ledger(gw, { userId: lister.userId })).length, ledgerBefore, 'no ledger entry for list or search');
  });

  test('search: others’ public assistants as public cards only; private ones hidden; org-private ones for members only', async () => {
    const token = randomUUID().slice(0, 8);
    const pub = await createAssistant(gw, owner.key, {
      mention: newMention('pub'), title: `P${token}`, subtitle: 'Public one', description: 'Open to all', instruction: 'SECRET instruction', modelId: 'gpt-4o-mini',
      temperature: 0.1, access: { isPrivate: false }, mcp: [mcpServer], apiFunctions: [fn('secret')], database: { id: kb1 },
    });
    const priv = await createAssistant(gw, owner.key, { mention: newMention('priv'), title: `Q${token}`, modelId: 'gpt-4o-mini', access: { isPrivate: true } });
    const { userId: orgOwner, orgId } = await userWithOrg(gw, { user: '1.00', org: '1.00' });
    const { key: orgKey } = await gw.fundedKey({ userId: orgOwner, orgId });
    const corp = await createAssistant(gw, orgKey, { mention: newMention('corp'), title: `R${token}`, modelId: 'gpt-4o-mini', access: { isPrivate: true, orgId } });
    const member = await newUser(gw);
    await addMember(gw, orgId, member.userId, 'member');
    const stranger = await newUser(gw);

    const seen = await search(stranger.key, token);
    assert.deepEqual(seen.map((card) => card.id), [pub.id], 'a stranger sees only the public one');
    const card = seen[0]!;
    assert.deepEqual(Object.keys(card).sort(), CARD_FIELDS);
    for (const hidden of ['instruction', 'apiFunctions', 'mcp', 'database', 'temperature']) assert.ok(!(hidden in card), `${hidden} is not on a card`);
    assert.deepEqual(card.access, { isPrivate: false, isFree: true, installPrice: '0' });
    assert.deepEqual(card.owner, { id: owner.userId, name: 'Olga Owner' });
    assert.equal(card.title, `P${token}`);
    assert.equal(card.likes, 0);
    assert.equal(card.isInstalled, false);
    assert.ok(!JSON.stringify(seen).includes('SECRET'), 'the instruction never leaks');

    const byMember = (await search(member.key, token)).map((found) => found.id);
    assert.ok(byMember.includes(corp.id), 'a member of the organisation finds its private assistant');
    assert.ok(!byMember.includes(priv.id), 'another owner’s private assistant stays hidden');
    assert.ok(!(await search(stranger.key, token)).some((found) => found.id === corp.id || found.id === priv.id));
  });

  test('search `@code` is strict; a plain query matches codes by substring', async () => {
    const code = newMention('strict');
    const exact = await createAssistant(gw, owner.key, { mention: code, title: 'Strict A', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    const longer = await createAssistant(gw, owner.key, { mention: `${code}-2`, title: 'Strict B', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    const stranger = await newUser(gw);
    assert.deepEqual(new Set((await search(stranger.key, code)).map((card) => card.id)), new Set([exact.id, longer.id]));
    assert.deepEqual((await search(stranger.key, `@${code}`)).map((card) => card.id), [exact.id]);
    assert.deepEqual((await search(stranger.key, `@${code.toUpperCase()}`)).map((card) => card.id), [exact.id], 'codes compare case-insensitively');
  });

  test('sortBy popular (likes, one per user) vs newest; limit 1–30', async () => {
    const token = randomUUID().slice(0, 8);
    const older = await createAssistant(gw, owner.key, { mention: newMention('older'), title: `Old ${token}`, modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    gw.clock.advance(5_000);
    const newer = await createAssistant(gw, owner.key, { mention: newMention('newer'), title: `New ${token}`, modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    const fan = await newUser(gw);
    const other = await newUser(gw);
    assert.equal((await api(gw, 'POST', '/v1/assistant/like', fan.key, { id: older.id })).body.likes, 1);
    assert.equal((await api(gw, 'POST', '/v1/assistant/like', fan.key, { id: older.id })).body.likes, 1, 'liking twice counts once');
    assert.equal((await api(gw, 'POST', '/v1/assistant/like', other.key, { id: older.id })).body.likes, 2);

    const popular = await search(other.key, token, '&sortBy=popular');
    assert.deepEqual(popular.map((card) => [card.id, card.likes]), [[older.id, 2], [newer.id, 0]]);
    assert.deepEqual((await search(other.key, token)).map((card) => card.id), [older.id, newer.id], 'popular is the default');
    assert.deepEqual((await search(other.key, token, '&sortBy=newest')).map((card) => card.id), [newer.id, older.id]);

    const tooMany = await api(gw, 'GET', '/v1/assistant/search?limit=31', other.key);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(errorA(tooMany.body).type, 'invalid_request_error');
    assert.ok(errorA(tooMany.body).message.startsWith('limit: '), errorA(tooMany.body).message);
    assert.equal((await api(gw, 'GET', '/v1/assistant/search?limit=30', other.key)).status, 200);
  });

  test('install: a free assistant costs nothing; a paid one charges its price exactly once; isInstalled for the installer', async () => {
    const free = await createAssistant(gw, owner.key, { mention: newMention('free'), title: 'Free one', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    const paid = await createAssistant(gw, owner.key, { mention: newMention('paid'), title: 'Paid one', modelId: 'gpt-4o-mini', access: { isPrivate: false, isFree: false, installPrice: '1.50' } });
    const buyer = await newUser(gw, '10.00');
    const onlooker = await newUser(gw);
    const state = async (): Promise<{ balance: bigint; charges: number }> => ({
      balance: micros(await gw.balance({ userId: buyer.userId })),
      charges: charges(await ledger(gw, { userId: buyer.userId })).length,
    });
    const start = await state();
    const installFree = await api(gw, 'POST', '/v1/assistant/install', buyer.key, { id: free.id });
    assert.equal(installFree.status, 200, installFree.text);
    assert.equal(installFree.body.isInstalled, true);
    assert.deepEqual(await state(), start, 'a free install charges nothing');
    assert.equal((await search(buyer.key, `@${free.mention}`))[0]?.isInstalled, true);
    assert.equal((await search(onlooker.key, `@${free.mention}`))[0]?.isInstalled, false, 'only for the one who installed it');

    const installPaid = await api(gw, 'POST', '/v1/assistant/install', buyer.key, { id: paid.id });
    assert.equal(installPaid.status, 200, installPaid.text);
    const afterPaid = await state();
    assert.equal(start.balance - afterPaid.balance, 1_500_000n, 'charged exactly 1.50');
    assert.equal(afterPaid.charges, start.charges + 1);
    assert.equal(micros(charges(await ledger(gw, { userId: buyer.userId })).at(-1)?.amount ?? '0'), -1_500_000n);
    const again = await api(gw, 'POST', '/v1/assistant/install', buyer.key, { id: paid.id });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(await state(), afterPaid, 'installing again charges nothing');
    assert.equal((await search(buyer.key, `@${paid.mention}`))[0]?.isInstalled, true);
  });

  test('semantic search: a query equal to an assistant’s description finds it though title and code do not contain it', async () => {
    const description = `Grows heirloom tomatoes on windowsills in winter ${randomUUID().slice(0, 6)}`;
    const gardener = await createAssistant(gw, owner.key, { mention: newMention('sem'), title: 'Gardener', subtitle: 'Plants', description, modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    const stranger = await newUser(gw);
    assert.ok((await search(stranger.key, description)).some((card) => card.id === gardener.id), 'found by meaning (identical text)');
    assert.ok(!(await search(stranger.key, 'Repairs vintage motorcycles in a garage')).some((card) => card.id === gardener.id), 'an unrelated text does not find it');
  });
});
