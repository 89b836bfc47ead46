import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseMoney } from '../src/lib/money.ts';
import type { RequestLogRepository, RequestLogRow } from '../src/features/usage/request-log.ts';
import { ledger } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer, signIn, type SignedInClient } from './helpers/management.ts';

/**
 * Issue 12: a failed task's refund moves /usage exactly once and durably. The move is written in the refund's own
 * transaction (keyed by its ledger entry), so neither a request-log batch retried after a lost acknowledgement nor a
 * process stopped before the log's next write can make Σ /usage cost differ from Σ ledger (charges − refunds).
 */

type UsageRow = { endpoint?: string; cost: string };
type Row = { endpoint: string; cost: string };
type List<T> = { object: string; data: T[]; next_cursor: string | null };

const DAY = '2026-11-01';
const nanos = (text: string): bigint => {
  const value = parseMoney(text);
  assert.notEqual(value, undefined, `not an amount: ${text}`);
  return value!;
};
const hello = [{ role: 'user', content: 'Hello there, how are you today?' }];

function post(gw: TestGateway, path: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Σ /usage cost and −Σ the ledger's charges and refunds of one user, and the usage by endpoint. */
async function sums(gw: TestGateway, client: SignedInClient, userId: string): Promise<{ usage: bigint; ledger: bigint; kinds: string[]; imagine: bigint | undefined }> {
  const usage = await client.call<List<UsageRow>>('GET', `/usage?from=${DAY}&to=${DAY}&groupBy=endpoint`);
  assert.equal(usage.status, 200);
  const rows = (await ledger(gw, { userId })).filter((row) => row.kind === 'charge' || row.kind === 'refund');
  const imagine = usage.body.data.find((row) => row.endpoint === 'imagegen.imagine');
  return {
    usage: usage.body.data.reduce((sum, row) => sum + nanos(row.cost), 0n),
    ledger: -rows.reduce((sum, row) => sum + nanos(row.amount), 0n),
    kinds: rows.map((row) => row.kind).sort(),
    imagine: imagine ? nanos(imagine.cost) : undefined,
  };
}

/** A customer who made one chat completion and one image task that the vendor refuses (run it with runDue). */
async function customerWithFailingTask(gw: TestGateway): Promise<{ client: SignedInClient; customer: Awaited<ReturnType<typeof createCustomer>>; userId: string; taskId: string; key: string; createdCost: bigint }> {
  const customer = await createCustomer(gw, { balance: '5.00' });
  const key = (await gw.admin<{ key: string }>('POST', '/keys', { userId: customer.userId })).body.key;
  await (await post(gw, '/v1/chat/completions', key, { model: 'gpt-4.1-nano', messages: hello })).text();
  gw.simulator.addFault({ status: 400, match: { path: '/v1/images/generations' }, times: 1 });
  const created = await post(gw, '/v1/imagegen/imagine', key, { prompt: 'will be refused' });
  assert.equal(created.status, 200, await created.clone().text());
  const createdCost = nanos(created.headers.get('x-tollgate-cost') ?? '0');
  assert.ok(createdCost > 0n, 'the task is charged at creation');
  const taskId = ((await created.json()) as { id: string }).id;
  return { client: await signIn(gw, customer), customer, userId: customer.userId, taskId, key, createdCost };
}

async function runAndFail(gw: TestGateway, task: { taskId: string; key: string }): Promise<void> {
  await gw.app.services.runner.runDue();
  const answer = await fetch(`${gw.url}/v1/imagegen/tasks/${task.taskId}`, { headers: { authorization: `Bearer ${task.key}` } });
  assert.equal(((await answer.json()) as { status: string }).status, 'failed');
}

/** Flushes the request log, through the writer's failures (a flush that meets the injected failure rejects). */
async function flushThrough(gw: TestGateway): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await gw.app.services.requestLog.idle();
      return;
    } catch (error) {
      if (attempt > 5) throw error;
    }
  }
}

for (const database of ['sqlite', 'sqlite-file', 'postgres'] as const) {
  describe(`task refunds in /usage: once and durable (${database})`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway({ database });
    });
    after(async () => {
      await gw?.close();
    });

    for (const order of ['before', 'after'] as const) {
      test(`a request-log batch retried after a lost acknowledgement (refund ${order} the row is written): Σ /usage = Σ ledger to the nano-unit`, async () => {
        // The repository's append commits and then throws once, as when the database's answer to COMMIT is lost.
        const repository = gw.app.services.requestLog['repository'] as RequestLogRepository;
        const original = repository.append.bind(repository);
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        let writes = 0;
        let lost = 0;
        repository.append = async (...args: Parameters<RequestLogRepository['append']>) => {
          const rows: readonly RequestLogRow[] = args[0];
          await gate;
          await original(...args);
          writes += 1;
          if (lost === 0 && rows.some((row) => row.endpoint === 'imagegen.imagine')) {
            lost += 1;
            throw new Error('connection reset after COMMIT');
          }
        };
        try {
          const task = await customerWithFailingTask(gw);
          const { client, userId, createdCost } = task;
          if (order === 'after') {
            release();
            await flushThrough(gw);
            assert.equal(lost, 1, 'the row of the task-creating request was committed unacknowledged');
          }
          await runAndFail(gw, task);
          if (order === 'before') {
            release();
            await flushThrough(gw);
            assert.equal(lost, 1, 'the row of the task-creating request was committed unacknowledged');
          }
          assert.ok(writes >= 2, 'the batch was written again');
          assert.equal(gw.app.services.requestLog.health().ok, true);
          await gw.app.services.book.flush();

          const after = await sums(gw, client, userId);
          assert.deepEqual(after.kinds, ['charge', 'charge', 'refund']);
          assert.equal(after.usage, after.ledger, 'Σ usage = Σ charges − refunds');
          assert.equal(after.imagine, 0n, 'the refund counts once, where the charge did');
          const rows = (await client.call<List<Row>>('GET', '/requests')).body.data;
          assert.equal(rows.filter((row) => row.endpoint === 'imagegen.imagine').length, 1);
          assert.equal(nanos(rows.find((row) => row.endpoint === 'imagegen.imagine')!.cost), createdCost, 'the row keeps what was charged then');
        } finally {
          release();
          repository.append = original;
        }
      });
    }

    test('the process stops without writing the request log right after the refund: /usage already agrees with the ledger', async () => {
      const task = await customerWithFailingTask(gw);
      const { client, userId } = task;
      await gw.app.services.requestLog.idle();
      await gw.app.services.book.flush();
      const before = await sums(gw, client, userId);
      assert.equal(before.usage, before.ledger, 'before the refund');

      await runAndFail(gw, task);
      // As after kill -9: whatever the writer holds in memory is gone, and it never writes again.
      const writer = gw.app.services.requestLog['writer'];
      writer['stopped'] = true;
      clearTimeout(writer['timer']);
      const dropped = writer['queue'].length;
      writer['queue'] = [];

      const after = await sums(gw, client, userId);
      assert.deepEqual(after.kinds, ['charge', 'charge', 'refund']);
      assert.equal(after.usage, after.ledger, `Σ usage = Σ charges − refunds with ${dropped} queued rows dropped`);
      assert.equal(after.imagine, 0n, 'the refund moved the rollup of the request that created the task');
      assert.ok(before.usage - after.usage > 0n, 'the refund is in /usage');
      writer['stopped'] = false;
    });

    test("a refund after the request's row is past retention counts on its own day under task.<kind>; nothing waits", async () => {
      const task = await customerWithFailingTask(gw);
      const { userId, createdCost } = task;
      await gw.app.services.requestLog.idle();
      gw.clock.set(Date.parse('2026-12-05T10:00:00Z'));
      await gw.app.services.requestLog.maintain(true);
      const client = await signIn(gw, task.customer);
      assert.equal((await client.call<List<Row>>('GET', '/requests')).body.data.length, 0, 'the rows of 2026-11-01 are gone');

      await runAndFail(gw, task);
      await gw.app.services.book.flush();
      const usage = (await client.call<List<UsageRow & { day: string }>>('GET', '/usage?from=2026-11-01&to=2026-12-05&groupBy=day,endpoint')).body.data;
      const rows = (await ledger(gw, { userId })).filter((row) => row.kind === 'charge' || row.kind === 'refund');
      assert.equal(usage.reduce((sum, row) => sum + nanos(row.cost), 0n), -rows.reduce((sum, row) => sum + nanos(row.amount), 0n), 'Σ usage = Σ ledger');
      const refunded = usage.filter((row) => row.day === '2026-12-05' && nanos(row.cost) !== 0n);
      assert.deepEqual(refunded.map((row) => ({ endpoint: row.endpoint, cost: nanos(row.cost) })), [{ endpoint: 'task.imagine', cost: -createdCost }]);
      const waiting = await gw.storage.db.selectFrom('usage_adjustments').select('id').execute();
      assert.equal(waiting.length, 0, 'no adjustment left waiting for a row');
    });
  });
}
