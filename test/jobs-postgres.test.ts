import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSimulator, type Simulator } from '../simulator/server.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { dropPostgresSchema } from '../src/storage/database.ts';
import { SqlJobsRepository } from '../src/storage/jobs-repository.ts';
import { micros, POSTGRES_URL, startTestGateway, uniqueSchema, type TestGateway } from './helpers/gateway.ts';
import { balanceMicros, ledger } from './helpers/e2e.ts';
import { advanceAndRun, getOk, postOk, vendorCalls } from './helpers/tasks.ts';

const IMAGE_PRICE = micros('0.04');
const TASKS = 30;

/** Two gateways (two JobRunners) on one PostgreSQL schema, one simulator, one clock: DESIGN §3 "each job run once". */
describe('jobs on PostgreSQL: several workers', () => {
  const schema = uniqueSchema();
  const database = { url: `${POSTGRES_URL}?schema=${schema}` };
  const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
  let simulator: Simulator;
  let first: TestGateway;
  let second: TestGateway;

  before(async () => {
    simulator = await startSimulator();
    first = await startTestGateway({ database, clock, simulator });
    second = await startTestGateway({ database, clock, simulator });
  });
  after(async () => {
    await first?.close();
    await second?.close();
    await simulator?.close();
    await dropPostgresSchema(POSTGRES_URL, schema);
  });

  test(`${TASKS} queued tasks run by two runners at once: each exactly once, each charged once`, async () => {
    const { key, userId } = await first.fundedKey({ balance: '10.00' });
    const start = await balanceMicros(first, { userId });
    const ids: string[] = [];
    for (let index = 0; index < TASKS; index += 1) {
      const gateway = index % 2 === 0 ? first : second;
      ids.push(String((await postOk(gateway, '/v1/imagegen/imagine', key, { prompt: `picture number ${index}` })).body.id));
    }
    const calls = vendorCalls(first, '/v1/images/generations');

    const [ranByFirst, ranBySecond] = await Promise.all([first.app.services.runner.runDue(), second.app.services.runner.runDue()]);
    assert.equal(ranByFirst + ranBySecond, TASKS, `jobs run in all: ${ranByFirst} + ${ranBySecond}`);
    assert.equal(vendorCalls(first, '/v1/images/generations') - calls, TASKS, 'one vendor call per task');
    const prompts = simulator.requests
      .filter((request) => request.path === '/v1/images/generations')
      .map((request) => (request.json as { prompt?: unknown } | undefined)?.prompt);
    assert.equal(new Set(prompts).size, TASKS, 'no task was generated twice');

    for (const id of ids) {
      const task = await getOk(second, `/v1/imagegen/tasks/${id}`, key);
      assert.equal(task.status, 'done', id);
    }
    const rows = await ledger(first, { userId });
    assert.equal(rows.filter((row) => row.kind === 'charge').length, TASKS, 'exactly one charge per task');
    assert.equal(rows.filter((row) => row.kind === 'refund').length, 0);
    assert.equal(await balanceMicros(second, { userId }), start - BigInt(TASKS) * IMAGE_PRICE);
    const jobs = await first.storage.db.selectFrom('jobs').select(['status', 'attempts']).where('kind', '=', 'task.run').execute();
    assert.equal(jobs.length, TASKS);
    assert.ok(jobs.every((job) => job.status === 'done' && job.attempts === 1), 'every job done after one attempt');
    assert.equal(await advanceAndRun(first, 3_600_000) + (await second.app.services.runner.runDue()), 0, 'nothing left to run');
  });

  test('a job whose lease expired is taken over by another worker; the dead worker cannot finish it', async () => {
    const { key } = await first.fundedKey({ balance: '1.00' });
    const calls = vendorCalls(first, '/v1/images/generations');
    const id = String((await postOk(first, '/v1/imagegen/imagine', key, { prompt: 'an abandoned job' })).body.id);

    const jobs = new SqlJobsRepository(first.storage.db, 'postgres');
    const leased = await jobs.lease('w_gone', clock.now(), 1_000, 10);
    assert.deepEqual(leased.map((job) => job.subjectId), [id], 'the dead worker holds the task');

    assert.equal(await second.app.services.runner.runDue(), 0, 'a held lease is respected');
    assert.equal(vendorCalls(first, '/v1/images/generations'), calls);
    clock.advance(1_000);
    assert.equal(await second.app.services.runner.runDue(), 0, 'the lease still holds at its last millisecond');
    clock.advance(1);
    assert.equal(await second.app.services.runner.runDue(), 1, 'the expired lease is taken over');
    assert.equal(vendorCalls(first, '/v1/images/generations'), calls + 1);
    assert.equal((await getOk(first, `/v1/imagegen/tasks/${id}`, key)).status, 'done');

    const job = leased[0]!;
    assert.equal(await jobs.finish(job, 'w_gone', { type: 'failed', error: 'late' }, clock.now()), false, 'the lost lease cannot finish the job');
    const row = await first.storage.db.selectFrom('jobs').select(['status']).where('id', '=', job.id).executeTakeFirstOrThrow();
    assert.equal(row.status, 'done');
  });
});
