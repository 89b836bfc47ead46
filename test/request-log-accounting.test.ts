import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { ManualClock } from '../src/lib/clock.ts';
import { parseMoney } from '../src/lib/money.ts';
import { createAssistant, newChatId, newMention } from './helpers/assistants-e2e.ts';
import { ledger, waitFor, type LedgerRow } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer, signIn, type SignedInClient } from './helpers/management.ts';
import { wavOfSeconds } from './helpers/tasks.ts';
import { startChatService } from './helpers/chat-service.ts';

/**
 * The request log's accounting (issue 12, item 3): every billed non-stream answer's `x-tollgate-cost` is its ledger charge;
 * assistant chats log the tokens of their model calls; refunds of failed tasks keep /usage equal to the ledger to the
 * nano-unit; a full last page has no cursor; retention removes old rows (PostgreSQL: drops their day partitions) and
 * leaves the daily rollups, so /usage answers the same for those days.
 */

type Row = { id: string; endpoint: string; status: number; cost: string; input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number; created: unknown };
type UsageRow = { day?: string; endpoint?: string; requests: number; errors: number; input_tokens: number; output_tokens: number; cache_read_tokens: number; cache_write_tokens: number; cost: string };
type List<T> = { object: string; data: T[]; next_cursor: string | null };

/** Decimal text → nano-units, exactly. */
const nanos = (text: string): bigint => {
  const value = parseMoney(text);
  assert.notEqual(value, undefined, `not an amount: ${text}`);
  return value!;
};
const total = (values: readonly string[]): bigint => values.reduce((sum, value) => sum + nanos(value), 0n);
const hello = [{ role: 'user', content: 'Hello there, how are you today?' }];

async function settle(gw: TestGateway): Promise<void> {
  await gw.app.services.requestLog.idle();
  await gw.app.services.book.flush();
  await gw.app.services.requestLog.flush();
}

async function post(gw: TestGateway, path: string, key: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

/** Σ usage cost and Σ of the ledger's request-borne movements (charges and refunds; not credits) of one user. */
async function usageAndLedger(gw: TestGateway, client: SignedInClient, userId: string, from: string, to: string): Promise<{ usage: bigint; ledger: bigint; rows: LedgerRow[] }> {
  const usage = await client.call<List<UsageRow>>('GET', `/usage?from=${from}&to=${to}`);
  assert.equal(usage.status, 200);
  const rows = (await ledger(gw, { userId })).filter((row) => row.kind === 'charge' || row.kind === 'refund');
  return { usage: total(usage.body.data.map((row) => row.cost)), ledger: -total(rows.map((row) => row.amount)), rows };
}

for (const database of ['sqlite', 'sqlite-file', 'postgres'] as const) {
  describe(`request log accounting (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    test('x-tollgate-cost on every billed non-stream answer equals its ledger charge; an assistant chat logs its tokens', async () => {
      const customer = await createCustomer(gw, { balance: '20.00' });
      const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
      const mention = newMention('acct');
      await createAssistant(gw, key, { mention, title: 'Accountant', instruction: 'Answer briefly.', modelId: 'gpt-4o-mini', temperature: 0.2, access: { isPrivate: false } });
      const form = new FormData();
      form.set('file', new Blob([new Uint8Array(wavOfSeconds(5))], { type: 'audio/wav' }), 'a.wav');
      form.set('model', 'whisper-1');

      const calls: Array<[string, () => Promise<Response>]> = [
        ['chat.completions', () => post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1', messages: hello })],
        ['messages', () => post(gw, '/v1/messages', key, { model: 'claude-haiku-4-5', max_tokens: 50, messages: hello }, { 'anthropic-version': '2023-06-01' })],
        ['embeddings', () => post(gw, '/v1/embeddings', key, { model: 'text-embedding-3-small', input: 'a sentence long enough to be priced at all' })],
        ['moderations', () => post(gw, '/v1/moderations', key, { input: 'I will come for you and everyone you love.' })],
        ['audio.transcriptions', () => fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form })],
        ['assistant.chat', () => post(gw, '/v1/assistant/chat', key, { chatId: newChatId(), assistantCode: mention, message: 'What is the capital of France, please?' })],
      ];
      const answered = new Map<string, { requestId: string; cost: string; body: Record<string, unknown> }>();
      for (const [endpoint, call] of calls) {
        const response = await call();
        const text = await response.text();
        assert.equal(response.status, 200, `${endpoint}: ${text}`);
        const cost = response.headers.get('x-tollgate-cost');
        assert.ok(cost !== null, `${endpoint} answers with x-tollgate-cost`);
        assert.ok(nanos(cost) > 0n, `${endpoint} is billed: ${cost}`);
        answered.set(endpoint, { requestId: response.headers.get('x-request-id')!, cost, body: JSON.parse(text) as Record<string, unknown> });
      }
      await settle(gw);

      const entries = await ledger(gw, { userId: customer.userId });
      for (const [endpoint, { requestId, cost }] of answered) {
        const own = entries.filter((entry) => entry.requestId === requestId);
        assert.equal(own.length, 1, `${endpoint}: one ledger entry for the request`);
        assert.equal(own[0]!.kind, 'charge');
        assert.equal(-nanos(own[0]!.amount), nanos(cost), `${endpoint}: the header is the ledger's amount to the nano-unit`);
      }

      const client = await signIn(gw, customer);
      const rows = (await client.call<List<Row>>('GET', '/requests?limit=100')).body.data;
      const chat = answered.get('assistant.chat')!;
      const chatRow = rows.find((row) => row.id === chat.requestId);
      assert.ok(chatRow, 'the assistant chat has its row');
      const usage = chat.body.usage as { prompt_tokens: number; completion_tokens: number };
      assert.ok(usage.prompt_tokens > 0 && usage.completion_tokens > 0);
      assert.equal(chatRow.input_tokens + chatRow.cache_read_tokens + chatRow.cache_write_tokens, usage.prompt_tokens, 'its input tokens are those of its model calls');
      assert.equal(chatRow.output_tokens, usage.completion_tokens);
      assert.equal(nanos(chatRow.cost), nanos(chat.cost));
      const byEndpoint = (await client.call<List<UsageRow>>('GET', '/usage?from=2026-11-01&to=2026-11-01&groupBy=endpoint')).body.data;
      const chatUsage = byEndpoint.find((row) => row.endpoint === 'assistant.chat');
      assert.ok(chatUsage);
      assert.equal(chatUsage.input_tokens + chatUsage.cache_read_tokens + chatUsage.cache_write_tokens, usage.prompt_tokens, '/usage sums them');
      assert.equal(chatUsage.output_tokens, usage.completion_tokens);
      for (const row of rows) assert.equal(nanos(row.cost), nanos(answered.get(row.endpoint)?.cost ?? '0'), `row of ${row.endpoint} costs what its header said`);
    });

    test('a failed image task refunded later: /usage stays equal to the ledger (charges − refunds) to the nano-unit', async () => {
      const customer = await createCustomer(gw, { balance: '5.00' });
      const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
      await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-nano', messages: hello })).text();
      gw.simulator.addFault({ status: 400, match: { path: '/v1/images/generations' }, times: 1 });
      const created = await post(gw, '/v1/imagegen/imagine', key, { prompt: 'will be refused' });
      assert.equal(created.status, 200, await created.clone().text());
      const createdCost = nanos(created.headers.get('x-tollgate-cost') ?? '0');
      assert.ok(createdCost > 0n, 'the task is charged at creation, and says so');
      const task = (await created.json()) as { id: string };
      await gw.app.services.runner.runDue();
      const failed = (await (await fetch(`${gw.url}/v1/imagegen/tasks/${task.id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string };
      assert.equal(failed.status, 'failed');
      await settle(gw);

      const client = await signIn(gw, customer);
      const sums = await usageAndLedger(gw, client, customer.userId, '2026-11-01', '2026-11-01');
      assert.deepEqual(sums.rows.map((row) => row.kind).sort(), ['charge', 'charge', 'refund']);
      assert.equal(sums.usage, sums.ledger, 'Σ usage = Σ charges − refunds');
      const byEndpoint = (await client.call<List<UsageRow>>('GET', '/usage?from=2026-11-01&to=2026-11-01&groupBy=endpoint')).body.data;
      assert.equal(nanos(byEndpoint.find((row) => row.endpoint === 'imagegen.imagine')!.cost), 0n, 'the refund counts where the charge did');
      const rows = (await client.call<List<Row>>('GET', '/requests')).body.data;
      assert.equal(nanos(rows.find((row) => row.endpoint === 'imagegen.imagine')!.cost), createdCost, 'the row keeps what was charged then');
    });

    test("a chat-bot's replies (made by a job, not a request) are logged and counted: /usage stays equal to the ledger", async () => {
      const customer = await createCustomer(gw, { balance: '5.00' });
      const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
      const assistant = await createAssistant(gw, key, { mention: newMention('botlog'), title: 'Support', instruction: 'Be kind.', modelId: 'gpt-4o-mini' });
      const service = await startChatService();
      try {
        const bot = await gw.admin<{ id: string; token: string }>('POST', '/bots', { userId: customer.userId, assistantId: assistant.id, webhookUrl: service.url });
        assert.equal(bot.status, 200, JSON.stringify(bot.body));
        const event = {
          id: crypto.randomUUID(), site_id: '1', client_id: 'client-1', chat_id: `chat-${crypto.randomUUID()}`, agents_online: false,
          sender: { id: 1, name: 'Client' }, message: { type: 'TEXT', text: 'Do you deliver on Sundays?', timestamp: Math.floor(gw.clock.now() / 1000) },
          channel: { id: '1', type: 'widget' }, event: 'CLIENT_MESSAGE',
        };
        const sent = await fetch(`${gw.url}/api/bot`, { method: 'POST', headers: { authorization: bot.body.token, 'content-type': 'application/json' }, body: JSON.stringify(event) });
        assert.equal(sent.status, 200, await sent.text());
        await gw.app.services.runner.runDue();
        assert.equal(service.delivered.filter((delivery) => delivery.json.event === 'BOT_MESSAGE').length, 1, 'the bot replied');
        await settle(gw);

        const client = await signIn(gw, customer);
        const sums = await usageAndLedger(gw, client, customer.userId, '2026-11-01', '2026-11-01');
        const charge = sums.rows.find((row) => row.description?.startsWith('assistant.chat'));
        assert.ok(charge, 'the reply was charged');
        assert.equal(sums.usage, sums.ledger, 'Σ usage = Σ ledger, the reply included');
        const row = (await client.call<List<Row & { keyId: string }>>('GET', '/requests')).body.data.find((candidate) => candidate.endpoint === 'bot.reply');
        assert.ok(row, 'the reply has its row');
        assert.equal(row.id, charge.requestId);
        assert.equal(row.keyId, bot.body.id, "logged under the bot's id");
        assert.equal(nanos(row.cost), -nanos(charge.amount));
        assert.ok(row.input_tokens > 0 && row.output_tokens > 0, 'with the tokens of its model calls');
      } finally {
        await service.close();
      }
    });

    test('a page holding exactly the last rows has no next_cursor; a cursor never leads to an empty page', async () => {
      const customer = await createCustomer(gw);
      const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
      for (let index = 0; index < 4; index += 1) await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-nano', messages: hello })).text();
      await settle(gw);
      const client = await signIn(gw, customer);
      const exact = (await client.call<List<Row>>('GET', '/requests?limit=4')).body;
      assert.equal(exact.data.length, 4);
      assert.equal(exact.next_cursor, null, 'exactly `limit` rows: nothing follows');
      const first = (await client.call<List<Row>>('GET', '/requests?limit=2')).body;
      assert.ok(first.next_cursor);
      const second = (await client.call<List<Row>>('GET', `/requests?limit=2&cursor=${first.next_cursor}`)).body;
      assert.equal(second.data.length, 2);
      assert.equal(second.next_cursor, null, 'the second page is the last one');
      assert.equal(new Set([...first.data, ...second.data].map((row) => row.id)).size, 4);

      // The ledger pages the same way: 4 charges and the initial credit.
      const ledgerPage = (await client.call<List<{ id: string }>>('GET', '/ledger?limit=5')).body;
      assert.equal(ledgerPage.data.length, 5);
      assert.equal(ledgerPage.next_cursor, null, 'exactly `limit` entries: nothing follows');
      const ledgerFirst = (await client.call<List<{ id: string }>>('GET', '/ledger?limit=3')).body;
      assert.ok(ledgerFirst.next_cursor);
      const ledgerSecond = (await client.call<List<{ id: string }>>('GET', `/ledger?limit=3&cursor=${ledgerFirst.next_cursor}`)).body;
      assert.equal(ledgerSecond.data.length, 2);
      assert.equal(ledgerSecond.next_cursor, null);
    });
  });

  describe(`request log retention (${database})`, () => {
    const clock = new ManualClock(Date.parse('2026-11-01T08:00:00Z'));
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database, clock, config: { requestLogDays: 2 } });
    });
    after(async () => {
      await gw?.close();
    });

    /** The day partitions of the request log (PostgreSQL), from the catalog. */
    const partitions = async (): Promise<string[]> => {
      const result = await sql<{ name: string }>`select child.relname as name from pg_inherits
        join pg_class child on child.oid = pg_inherits.inhrelid join pg_class parent on parent.oid = pg_inherits.inhparent
        join pg_namespace ns on ns.oid = parent.relnamespace
        where parent.relname = 'request_log' and ns.nspname = current_schema()`.execute(gw.storage.db);
      return result.rows.map((row) => row.name).sort();
    };

    test('rows older than TOLLGATE_REQUEST_LOG_DAYS go (PostgreSQL: their day partitions are dropped); the rollups stay, /usage answers the same', async () => {
      const customer = await createCustomer(gw, { balance: '5.00' });
      const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
      for (let index = 0; index < 3; index += 1) await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-nano', messages: hello })).text();
      clock.set(Date.parse('2026-11-02T12:00:00Z'));
      for (let index = 0; index < 2; index += 1) await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-mini', messages: hello })).text();
      await settle(gw);
      const client = await signIn(gw, customer);
      const usageQuery = '/usage?from=2026-11-01&to=2026-11-02&groupBy=day,model';
      const usageBefore = (await client.call<List<UsageRow>>('GET', usageQuery)).body.data;
      assert.deepEqual(usageBefore.map((row) => [row.day, row.requests]), [['2026-11-01', 3], ['2026-11-02', 2]]);
      assert.equal((await client.call<List<Row>>('GET', '/requests')).body.data.length, 5);
      if (database === 'postgres') {
        const present = await partitions();
        for (const day of ['20261101', '20261102']) assert.ok(present.includes(`request_log_p${day}`), `partition of ${day}: ${present.join(',')}`);
      }

      // Two days after 2026-11-01 ended: with 2 days kept, the 1st goes, the 2nd (its rows younger than the cutoff) stays.
      clock.set(Date.parse('2026-11-04T06:00:00Z'));
      await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-nano', messages: hello })).text();
      // The writer's own timer writes the new row and then runs retention (at most hourly): nothing forces it here.
      const left = await waitFor(async () => {
        const rows = (await client.call<List<Row>>('GET', '/requests')).body.data;
        return rows.length === 3 ? rows : undefined;
      }, 'retention to remove the rows of 2026-11-01', 5_000);
      assert.deepEqual(left.map((row) => new Date(String(row.created)).toISOString().slice(0, 10)).sort(), ['2026-11-02', '2026-11-02', '2026-11-04']);
      assert.deepEqual((await client.call<List<UsageRow>>('GET', usageQuery)).body.data, usageBefore, '/usage of the removed days is unchanged');
      const ledgerSums = await usageAndLedger(gw, client, customer.userId, '2026-11-01', '2026-11-04');
      assert.equal(ledgerSums.usage, ledgerSums.ledger, 'all of /usage still equals the ledger');
      if (database === 'postgres') {
        const present = await partitions();
        assert.ok(!present.includes('request_log_p20261101'), `the partition of 2026-11-01 is dropped: ${present.join(',')}`);
        assert.ok(!present.includes('request_log_p20261031'));
        for (const day of ['20261102', '20261104', '20261105', '20261106', '20261107']) assert.ok(present.includes(`request_log_p${day}`), `partition of ${day} kept or made ahead: ${present.join(',')}`);
        const inDefault = await sql<{ count: string }>`select count(*) as count from request_log_default`.execute(gw.storage.db);
        assert.equal(Number(inDefault.rows[0]!.count), 0, 'no row waits in the default partition');
      }
    });
  });
}
