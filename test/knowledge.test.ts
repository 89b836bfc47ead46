import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { countTokens, openAiPromptTokens } from '../simulator/server.ts';
import { chunkDocument } from '../src/features/knowledge/chunking.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, catalogEntry, charges, errorA, expectedCost, ledger, tokensCostMicros, type JsonRecord } from './helpers/e2e.ts';

const EMBEDDING_PRICE = catalogEntry('text-embedding-3-small').cost_context;
const FACT = 'The launch code of Project Heron is AZURE-PELICAN-4417.';
const FACT_DOCUMENT = `Project Heron briefing.\n\n${FACT} Only the quartermaster may read it aloud.`;

interface Sent {
  status: number;
  body: JsonRecord;
  requestId: string | null;
}

async function send(gw: TestGateway, method: 'GET' | 'POST', path: string, key: string | undefined, body?: unknown): Promise<Sent> {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: asRecord(await response.json(), `${path} body`), requestId: response.headers.get('x-request-id') };
}

const records = (value: unknown): JsonRecord => asRecord(value);

const post = (gw: TestGateway, path: string, key: string | undefined, body: unknown): Promise<Sent> => send(gw, 'POST', path, key, body);

async function ok(result: Promise<Sent>): Promise<JsonRecord> {
  const { status, body } = await result;
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

const createBase = async (gw: TestGateway, key: string, title: string): Promise<string> => String((await ok(post(gw, '/v1/database/create', key, { title }))).id);

function expectError(result: Sent, status: number, message: string, type = 'invalid_request_error'): void {
  assert.equal(result.status, status, JSON.stringify(result.body));
  const error = errorA(result.body);
  assert.equal(error.message, message);
  assert.equal(error.type, type);
}

/** Exact embedding cost, in micro-units, of texts embedded by the simulator (one price over the summed tokens). */
const embeddingCost = (texts: readonly string[]): { tokens: number; cost: bigint } => {
  const tokens = texts.reduce((sum, text) => sum + countTokens(text), 0);
  return { tokens, cost: tokensCostMicros(tokens, EMBEDDING_PRICE) };
};

async function createAssistant(gw: TestGateway, key: string, database: unknown, extra: JsonRecord = {}): Promise<string> {
  const body = await ok(post(gw, '/v1/assistant/create', key, { title: 'Heron helper', modelId: 'gpt-4o-mini', instruction: 'Answer from the documents.', database, ...extra }));
  return String(body.mention);
}

interface ChatResult extends Sent {
  /** The chat-completions requests the gateway made for this turn, in order. */
  rounds: JsonRecord[];
}

let chatCounter = 0;
async function chat(gw: TestGateway, key: string, code: string, message: string): Promise<ChatResult> {
  chatCounter += 1;
  const mark = gw.simulator.requests.length;
  const result = await post(gw, '/v1/assistant/chat', key, { chatId: `knowledge-chat-${String(chatCounter).padStart(12, '0')}`, assistantCode: code, message });
  const rounds = gw.simulator.requests.slice(mark).filter((request) => request.path === '/v1/chat/completions').map((request) => asRecord(request.json));
  return { ...result, rounds };
}

function systemOfLastChat(gw: TestGateway): string {
  const messages = asArray(asRecord(gw.simulator.lastRequest('/v1/chat/completions')?.json).messages);
  const first = asRecord(messages[0]);
  assert.equal(first.role, 'system');
  return String(first.content);
}

/** What each model round produced, in tokens: the tool call's arguments (seen in the next round) or the final reply. */
function completionTokensOf(result: ChatResult): number[] {
  return result.rounds.map((_, index) => {
    const next = result.rounds[index + 1];
    if (!next) return countTokens(String(result.body.message));
    const call = asArray(asArray(next.messages).map(records).filter((message) => message.role === 'assistant').at(-1)?.tool_calls)[0];
    return countTokens(String(asRecord(asRecord(call).function).arguments));
  });
}

/**
 * The chat's usage adds up: each model round priced at the catalog price (rounded per round), the embedding at its
 * price, total = their sum = the one ledger entry of the turn.
 */
async function assertChatBilled(gw: TestGateway, result: ChatResult, userId: string, balanceBefore: bigint, embeddedText: string | undefined): Promise<JsonRecord> {
  const usage = asRecord(result.body.usage, 'usage');
  const completions = completionTokensOf(result);
  const perRound = result.rounds.map((round, index) => expectedCost('gpt-4o-mini', { prompt_tokens: openAiPromptTokens(round), completion_tokens: completions[index]! }));
  assert.equal(usage.prompt_tokens, result.rounds.reduce((sum, round) => sum + openAiPromptTokens(round), 0));
  assert.equal(usage.completion_tokens, completions.reduce((sum, tokens) => sum + tokens, 0));
  const expectedModel = perRound.reduce((sum, cost) => ({ prompt: sum.prompt + cost.prompt, completion: sum.completion + cost.completion, total: sum.total + cost.total }), { prompt: 0n, completion: 0n, total: 0n });
  assert.equal(micros(Number(usage.prompt_cost)), expectedModel.prompt);
  assert.equal(micros(Number(usage.completion_cost)), expectedModel.completion);
  const embedding = embeddedText === undefined ? { tokens: 0, cost: 0n } : embeddingCost([embeddedText]);
  assert.equal(usage.embedding_tokens, embedding.tokens);
  assert.equal(micros(Number(usage.embedding_cost)), embedding.cost);
  const total = expectedModel.total + embedding.cost;
  assert.equal(micros(Number(usage.total_cost)), total);
  assert.equal(await balanceMicros(gw, { userId }), balanceBefore - total);
  const entries = charges(await ledger(gw, { userId })).filter((row) => row.requestId === result.requestId);
  assert.equal(entries.length, 1, 'one ledger entry per chat turn');
  assert.equal(micros(entries[0]!.amount), -total);
  return usage;
}

function knowledgeSuite(database: 'sqlite' | 'postgres'): void {
  describe(`knowledge bases (${database})`, () => {
    let gw: TestGateway;
    let owner: { key: string; userId: string };
    let stranger: { key: string; userId: string };

    before(async () => {
      gw = await startTestGateway({ database });
      owner = await gw.fundedKey({ balance: '5.00' });
      stranger = await gw.fundedKey({ balance: '5.00' });
    });
    after(async () => {
      await gw?.close();
    });

    test('create, add (billed per embedded chunk), list, delete', async () => {
      const created = await ok(post(gw, '/v1/database/create', owner.key, { title: 'Manuals' }));
      assert.match(String(created.id), /^kb_/);
      assert.deepEqual({ ...created, id: 'x' }, { id: 'x', object: 'database', title: 'Manuals', createDate: '2026-11-01T00:00:00.000Z', documents: 0, chunks: 0 });
      const baseId = String(created.id);

      const text = Array.from({ length: 60 }, (_, index) => `Sentence ${index} of the operating manual explains step ${index}.`).join(' ');
      const markdown = `# Manual\n\nIntro.\n\n## Install\n\nRun the installer.\n\n## Remove\n\nDelete the folder.`;
      let balance = await balanceMicros(gw, { userId: owner.userId });
      for (const [title, body, format] of [['Operating manual', text, 'text'], ['Setup', markdown, 'markdown']] as const) {
        const expectedChunks = chunkDocument(body, format);
        const result = await post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title, text: body, format });
        assert.equal(result.status, 200, JSON.stringify(result.body));
        assert.deepEqual(asRecord(gw.simulator.lastRequest('/v1/embeddings')?.json).input, expectedChunks, 'each chunk is embedded as stored');
        const { tokens, cost } = embeddingCost(expectedChunks);
        assert.ok(cost > 0n);
        assert.match(String(result.body.id), /^kdoc_/);
        assert.deepEqual(
          { ...result.body, id: 'x' },
          { id: 'x', object: 'database.document', databaseId: baseId, title, chunks: expectedChunks.length, usage: { embedding_tokens: tokens, embedding_cost: Number(cost) / 1e6, total_cost: Number(cost) / 1e6 } },
        );
        balance -= cost;
        assert.equal(await balanceMicros(gw, { userId: owner.userId }), balance);
        const entries = charges(await ledger(gw, { userId: owner.userId })).filter((row) => row.requestId === result.requestId);
        assert.equal(entries.length, 1);
        assert.equal(micros(entries[0]!.amount), -cost);
        assert.equal(entries[0]!.model, 'text-embedding-3-small');
      }
      assert.ok(chunkDocument(text, 'text').length > 1, 'the text document was long enough to be cut');
      assert.deepEqual(chunkDocument(markdown, 'markdown'), ['# Manual\nIntro.', '# Manual\n## Install\nRun the installer.', '# Manual\n## Remove\nDelete the folder.']);

      const chunks = chunkDocument(text, 'text').length + 3;
      const listed = await ok(send(gw, 'GET', '/v1/database/list', owner.key));
      assert.equal(listed.object, 'list');
      assert.deepEqual(asArray(listed.data).map(records).find((item) => item.id === baseId), { id: baseId, object: 'database', title: 'Manuals', createDate: '2026-11-01T00:00:00.000Z', documents: 2, chunks });

      assert.deepEqual(await ok(post(gw, '/v1/database/delete', owner.key, { id: baseId })), { id: baseId, object: 'database', deleted: true });
      assert.ok(!asArray((await ok(send(gw, 'GET', '/v1/database/list', owner.key))).data).some((item) => asRecord(item).id === baseId));
      for (const table of ['knowledge_chunks', 'knowledge_documents'] as const) {
        assert.equal((await gw.storage.db.selectFrom(table).select('id').where('base_id', '=', baseId).execute()).length, 0, `${table} emptied`);
      }
      expectError(await post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'Late', text: 'x' }), 404, 'Knowledge base not found');
      expectError(await post(gw, '/v1/database/delete', owner.key, { id: baseId }), 404, 'Knowledge base not found');
    });

    test('another user cannot see, add to or delete a base (404), and pays nothing', async () => {
      const baseId = await createBase(gw, owner.key, 'Private notes');
      const before = await balanceMicros(gw, { userId: stranger.userId });
      const listed = await ok(send(gw, 'GET', '/v1/database/list', stranger.key));
      assert.ok(!asArray(listed.data).some((item) => asRecord(item).id === baseId));
      expectError(await post(gw, '/v1/database/add', stranger.key, { databaseId: baseId, title: 'Intruder', text: 'Planted text.' }), 404, 'Knowledge base not found');
      expectError(await post(gw, '/v1/database/delete', stranger.key, { id: baseId }), 404, 'Knowledge base not found');
      assert.equal(await balanceMicros(gw, { userId: stranger.userId }), before);
      const mine = asArray((await ok(send(gw, 'GET', '/v1/database/list', owner.key))).data).map(records);
      assert.deepEqual(mine.find((item) => item.id === baseId)?.documents, 0, 'the owner still has the base, untouched');
    });

    test('validation (400, `<param>: <constraint>`), missing key (401), balance not positive (402)', async () => {
      const baseId = await createBase(gw, owner.key, 'Checks');
      expectError(await post(gw, '/v1/database/create', owner.key, { title: '' }), 400, 'title: must not be empty');
      expectError(await post(gw, '/v1/database/create', owner.key, {}), 400, 'title: is required');
      expectError(await post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'T' }), 400, 'text: is required');
      const badFormat = await post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'T', text: 'x', format: 'pdf' });
      assert.equal(badFormat.status, 400);
      assert.match(errorA(badFormat.body).message, /^format: /);
      expectError(await post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'T', text: '# Only\n## Headings', format: 'markdown' }), 400, 'text: must contain text to index (Markdown headings alone are not indexed)');
      expectError(await post(gw, '/v1/database/delete', owner.key, {}), 400, 'id: is required');
      expectError(await send(gw, 'GET', '/v1/database/list', undefined), 401, 'Unauthorized', 'unauthorized_request_error');
      expectError(await post(gw, '/v1/database/create', 'sk-not-a-key', { title: 'x' }), 401, 'Unauthorized', 'unauthorized_request_error');

      const broke = await gw.fundedKey({ balance: '0' });
      const brokeBase = await createBase(gw, broke.key, 'Free to create');
      expectError(await post(gw, '/v1/database/add', broke.key, { databaseId: brokeBase, title: 'T', text: 'Some text.' }), 402, 'Balance is too low to use API', 'insufficient_balance_error');
      assert.equal(await gw.balance({ userId: broke.userId }), '0.00');
    });

    test("'always': the most relevant chunk is in the system prompt; the chatter pays the message's embedding", async () => {
      const baseId = await createBase(gw, owner.key, 'Heron');
      await ok(post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'Heron briefing', text: FACT_DOCUMENT }));
      const code = await createAssistant(gw, owner.key, { id: baseId, requestFrequency: 'always', chunks: 1 });
      const question = 'What is the launch code of Project Heron?';
      const before = await balanceMicros(gw, { userId: owner.userId });
      const result = await chat(gw, owner.key, code, question);
      assert.equal(result.status, 200, JSON.stringify(result.body));
      assert.deepEqual(asRecord(gw.simulator.lastRequest('/v1/embeddings')?.json).input, [question], 'the user message is embedded');
      const system = systemOfLastChat(gw);
      assert.ok(system.startsWith('Answer from the documents.\n\nKnowledge base excerpts:\n\n[1] From "Heron briefing":\n'), system);
      assert.ok(system.includes(FACT), 'the document-only fact reached the model');
      const usage = await assertChatBilled(gw, result, owner.userId, before, question);
      assert.ok(Number(usage.embedding_tokens) > 0);
    });

    test("'always' ranks by cosine: of three documents, only the one closest to the message is given with chunks: 1", async () => {
      const baseId = await createBase(gw, owner.key, 'Ranking');
      const texts = ['Alpha notes: the alpha valve is red.', 'Beta notes: the beta valve is green.', 'Gamma notes: the gamma valve is blue.'];
      for (const [index, text] of texts.entries()) await ok(post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: `Doc ${index}`, text }));
      const code = await createAssistant(gw, owner.key, { id: baseId, requestFrequency: 'always', chunks: 1 });
      // The simulator's embeddings make identical texts cosine 1 and different ones about 0.
      assert.equal((await chat(gw, owner.key, code, texts[1]!)).status, 200);
      const system = systemOfLastChat(gw);
      assert.ok(system.includes('[1] From "Doc 1":\nBeta notes') && !system.includes('Alpha notes') && !system.includes('Gamma notes'), system);
    });

    test("'auto': the model is offered search_knowledge_base, calls it, and the tool result carries the fact", async () => {
      const baseId = await createBase(gw, owner.key, 'Heron auto');
      await ok(post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'Heron briefing', text: FACT_DOCUMENT }));
      const code = await createAssistant(gw, owner.key, { id: baseId, requestFrequency: 'auto', chunks: 2 });
      const before = await balanceMicros(gw, { userId: owner.userId });
      const result = await chat(gw, owner.key, code, 'What is the launch code of Project Heron?');
      assert.equal(result.status, 200, JSON.stringify(result.body));
      const rounds = result.rounds;
      assert.equal(rounds.length, 2, 'a tool round, then the answer');
      const tool = asRecord(asRecord(asArray(rounds[0]!.tools)[0]).function);
      assert.equal(tool.name, 'search_knowledge_base');
      assert.deepEqual(asRecord(tool.parameters).required, ['query']);
      const firstMessages = asArray(rounds[0]!.messages).map(records);
      assert.ok(!String(firstMessages[0]!.content).includes(FACT), "'auto' puts nothing into the system prompt");
      const toolMessage = asArray(rounds[1]!.messages).map(records).find((message) => message.role === 'tool');
      assert.ok(toolMessage && String(toolMessage.content).includes(FACT), JSON.stringify(toolMessage));
      assert.ok(String(toolMessage.content).startsWith('Knowledge base excerpts:\n\n[1] From "Heron briefing":'));
      assert.ok(String(result.body.message).startsWith('Tool result received: Knowledge base excerpts:'), String(result.body.message));
      // The simulator's tool call asks for the query "sample" (json-sample.ts): that is what was embedded and charged.
      await assertChatBilled(gw, result, owner.userId, before, 'sample');
    });

    test("an assistant cannot link someone else's base; a public assistant's knowledge is paid by the chatter", async () => {
      const baseId = await createBase(gw, owner.key, 'Owner only');
      await ok(post(gw, '/v1/database/add', owner.key, { databaseId: baseId, title: 'Heron briefing', text: FACT_DOCUMENT }));
      const stolen = await post(gw, '/v1/assistant/create', stranger.key, { title: 'Thief', modelId: 'gpt-4o-mini', database: { id: baseId, requestFrequency: 'always', chunks: 3 } });
      assert.equal(stolen.status, 400, JSON.stringify(stolen.body));
      assert.match(JSON.stringify(stolen.body), /database\.id: /);

      const shared = await createAssistant(gw, owner.key, { id: baseId, requestFrequency: 'always', chunks: 1 }, { access: { isPrivate: false } });
      const ownerBefore = await balanceMicros(gw, { userId: owner.userId });
      const before = await balanceMicros(gw, { userId: stranger.userId });
      const question = 'Launch code, please?';
      const answered = await chat(gw, stranger.key, shared, question);
      assert.equal(answered.status, 200, JSON.stringify(answered.body));
      assert.ok(systemOfLastChat(gw).includes(FACT));
      await assertChatBilled(gw, answered, stranger.userId, before, question);
      assert.equal(await balanceMicros(gw, { userId: owner.userId }), ownerBefore, 'the owner pays nothing for others chatting');
    });
  });
}

knowledgeSuite('sqlite');
knowledgeSuite('postgres');
