import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { balanceMicros, ledger, type JsonRecord } from './helpers/e2e.ts';
import { advanceAndRun, getOk, movementSummary, postOk, vendorCalls } from './helpers/tasks.ts';

/** catalog/models.json price of one sora-2 task. */
const PRICE = micros('0.40');
/** Every GET /v1/videos/{id} (status polls and the content download); not the creating POST /v1/videos. */
const VIDEO_POLLS = '/v1/videos/';

/**
 * Polling a vendor that is still working is not a failure: a long video generation polled many times survives one vendor
 * 5xx, while three real failures in a row still fail the task and refund it once.
 */
describe('video task polls and vendor failures', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  const readTask = (id: string, key: string): Promise<JsonRecord> => getOk(gw, `/media/tasks/${id}`, key);
  const ledgerSum = async (userId: string): Promise<bigint> => (await ledger(gw, { userId })).reduce((sum, row) => sum + micros(row.amount), 0n);
  const statusPolls = (): number => gw.simulator.requests.filter((request) => request.method === 'GET' && request.path.startsWith(VIDEO_POLLS) && !request.path.endsWith('/content')).length;

  /** Creates a sora-2 task and runs the first pass (the vendor creates the video); polls = runner passes 2 s apart. */
  async function startVideo(key: string, polls: number): Promise<string> {
    const created = await postOk(gw, '/api/v2/media/tasks', key, { model: 'sora-2', prompt: 'a long slow sunrise' });
    const id = String(created.body.id);
    await gw.app.services.runner.runDue();
    for (let poll = 0; poll < polls; poll += 1) await advanceAndRun(gw, 2_000);
    return id;
  }

  test('a video polled six times, then hit by one vendor 5xx, is retried and finishes done, charged once', async () => {
    gw.simulator.options.videoPollsToComplete = 8;
    const { key, userId } = await gw.fundedKey({ balance: '2.00' });
    const start = await balanceMicros(gw, { userId });
    const pollsBefore = statusPolls();
    const id = await startVideo(key, 6);
    assert.equal(statusPolls() - pollsBefore, 6, 'six polls while the vendor works');
    assert.equal((await readTask(id, key)).status, 'processing');

    gw.simulator.addFault({ match: { path: VIDEO_POLLS }, status: 503, times: 1 });
    await advanceAndRun(gw, 2_000);
    assert.equal((await readTask(id, key)).status, 'processing', 'one vendor 5xx after many polls does not fail the task');

    for (let pass = 0; pass < 10 && (await readTask(id, key)).status === 'processing'; pass += 1) await advanceAndRun(gw, 4_000);
    assert.equal((await readTask(id, key)).status, 'done');
    assert.equal(await balanceMicros(gw, { userId }), start - PRICE, 'charged once, not refunded');
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -PRICE, 'sora-2']]);
    assert.equal(await balanceMicros(gw, { userId }), await ledgerSum(userId), 'balance = Σ ledger');
  });

  test('three vendor failures in a row after many polls fail the task and refund it once', async () => {
    gw.simulator.options.videoPollsToComplete = 20;
    const { key, userId } = await gw.fundedKey({ balance: '2.00' });
    const start = await balanceMicros(gw, { userId });
    const id = await startVideo(key, 5);
    assert.equal((await readTask(id, key)).status, 'processing');

    gw.simulator.addFault({ match: { path: VIDEO_POLLS }, status: 500, times: 3 });
    const callsBefore = vendorCalls(gw, '/v1/videos');
    for (let pass = 0; pass < 10 && (await readTask(id, key)).status === 'processing'; pass += 1) await advanceAndRun(gw, 10_000);
    assert.equal((await readTask(id, key)).status, 'failed');
    assert.equal(vendorCalls(gw, '/v1/videos'), callsBefore, 'no new video was created at the vendor');
    assert.equal(await balanceMicros(gw, { userId }), start, 'refunded to exactly the starting amount');
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -PRICE, 'sora-2'], ['refund', PRICE, 'sora-2']]);
    assert.equal(await balanceMicros(gw, { userId }), await ledgerSum(userId), 'balance = Σ ledger');

    await advanceAndRun(gw, 600_000);
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -PRICE, 'sora-2'], ['refund', PRICE, 'sora-2']], 'nothing more later');
  });
});
