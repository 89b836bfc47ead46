import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PIXEL_PNG_BASE64 } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, errorA, postRaw, type JsonRecord } from './helpers/e2e.ts';
import { advanceAndRun, download, getOk, getRaw, movementSummary, postOk, vendorCalls } from './helpers/tasks.ts';

/** gpt-image-1 in catalog/models.json: 0.04 per task (the model behind /v1/imagegen/imagine). */
const IMAGE_PRICE = micros('0.04');
const ALL_ACTIONS = ['upscale_1', 'upscale_2', 'upscale_3', 'upscale_4', 'variation_1', 'variation_2', 'variation_3', 'variation_4', 'reroll'];

function imageTask(body: unknown): JsonRecord & { id: string } {
  const task = asRecord(body, 'image task');
  assert.equal(typeof task.id, 'string');
  return task as JsonRecord & { id: string };
}

/** Image URLs of a finished task. */
function images(task: JsonRecord): string[] {
  return asArray(asRecord(task.result, 'result').images, 'result.images').map((image) => String(asRecord(image).url));
}

describe('image tasks (SPEC 2.7, 4.7)', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '10.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  const imagine = async (prompt: string, as = key): Promise<JsonRecord & { id: string }> =>
    imageTask((await postOk(gw, '/v1/imagegen/imagine', as, { prompt })).body);
  const read = async (id: string, as = key): Promise<JsonRecord> => getOk(gw, `/v1/imagegen/tasks/${id}`, as);

  test('a missing prompt is a 400 in shape A naming the property; no key is a 401', async () => {
    const missing = await postRaw(gw, '/v1/imagegen/imagine', { key, body: { useWalletBalance: false } });
    assert.equal(missing.status, 400, missing.text);
    const error = errorA(missing.json);
    assert.equal(error.type, 'invalid_request_error');
    assert.match(error.message, /prompt/);
    const empty = await postRaw(gw, '/v1/imagegen/imagine', { key, body: { prompt: '' } });
    assert.equal(empty.status, 400, empty.text);
    assert.match(errorA(empty.json).message, /prompt/);

    const anonymous = await postRaw(gw, '/v1/imagegen/imagine', { body: { prompt: 'a lighthouse' } });
    assert.equal(anonymous.status, 401, anonymous.text);
    assert.deepEqual(errorA(anonymous.json), { message: 'Unauthorized', type: 'unauthorized_request_error', param: null, code: null });
  });

  test('a new task has the fields of SPEC 2.7 and is charged its catalog price at creation', async () => {
    const before = await balanceMicros(gw, { userId });
    const task = await imagine('Маяк на закате, акварель');
    assert.equal(task.object, 'task');
    assert.equal(task.type, 'imagine');
    assert.equal(task.parentId, null);
    assert.deepEqual(task.actions, []);
    assert.equal(task.percent, 0);
    assert.equal(task.status, 'idle');
    assert.equal(task.result, null);
    assert.equal(task.error, null);
    const usage = asRecord(task.usage, 'usage');
    for (const field of ['prompt_tokens', 'completion_tokens', 'total_tokens', 'prompt_cost', 'completion_cost', 'total_cost']) {
      assert.equal(typeof usage[field], 'number', `usage.${field} is a number`);
    }
    assert.equal(micros(usage.total_cost as number), IMAGE_PRICE);

    assert.equal(await balanceMicros(gw, { userId }), before - IMAGE_PRICE, 'charged at creation, before the task ran');
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -IMAGE_PRICE, 'gpt-image-1']], 'one ledger entry: the charge');
  });

  test('two identical requests make two tasks, each charged', async () => {
    const before = await balanceMicros(gw, { userId });
    const first = await imagine('the same prompt twice');
    const second = await imagine('the same prompt twice');
    assert.notEqual(first.id, second.id);
    assert.equal(await balanceMicros(gw, { userId }), before - 2n * IMAGE_PRICE);
    await gw.app.services.runner.runDue();
    assert.equal((await read(first.id)).status, 'done');
    assert.equal((await read(second.id)).status, 'done');
  });

  test('after the job runs the task is done with actions and four images served by the gateway', async () => {
    const task = await imagine('a red fox in snow');
    assert.equal((await read(task.id)).status, 'idle', 'nothing runs before the runner does');
    await gw.app.services.runner.runDue();
    const done = await read(task.id);
    assert.equal(done.status, 'done');
    assert.equal(done.percent, 100);
    assert.equal(done.error, null);
    assert.deepEqual(done.actions, ALL_ACTIONS);
    const urls = images(done);
    assert.equal(urls.length, 4);
    assert.equal(new Set(urls).size, 4, 'each image has its own URL');
    for (const url of urls) {
      const file = await download(gw, url);
      assert.equal(file.contentType, 'image/png');
      assert.deepEqual(file.data, Buffer.from(PIXEL_PNG_BASE64, 'base64'));
    }
    const forwarded = asRecord(gw.simulator.lastRequest('/v1/images/generations')?.json, 'forwarded body');
    assert.equal(forwarded.model, 'gpt-image-1');
    assert.equal(forwarded.prompt, 'a red fox in snow');
  });

  test("another user's key cannot read the task (404)", async () => {
    const task = await imagine('private picture');
    const stranger = await gw.fundedKey();
    const response = await getRaw(gw, `/v1/imagegen/tasks/${task.id}`, stranger.key);
    assert.equal(response.status, 404, response.text);
    assert.equal(errorA(response.json).type, 'invalid_request_error');
    assert.equal((await getRaw(gw, `/v1/imagegen/tasks/${task.id}`)).status, 401);
    const action = await postRaw(gw, '/v1/imagegen/action', { key: stranger.key, body: { taskId: task.id, action: 'reroll' } });
    assert.equal(action.status, 404, `no action on another user's task: ${action.text}`);
  });

  test('actions make charged child tasks with parentId that finish', async () => {
    const parent = await imagine('a castle on a hill');
    const early = await postRaw(gw, '/v1/imagegen/action', { key, body: { taskId: parent.id, action: 'upscale_1' } });
    assert.equal(early.status, 400, `an action on an unfinished task is refused: ${early.text}`);
    assert.equal(errorA(early.json).type, 'invalid_request_error');
    await gw.app.services.runner.runDue();

    const before = await balanceMicros(gw, { userId });
    const children: Array<{ action: string; task: JsonRecord & { id: string } }> = [];
    for (const action of ['upscale_2', 'variation_1', 'reroll']) {
      const child = imageTask((await postOk(gw, '/v1/imagegen/action', key, { taskId: parent.id, action })).body);
      assert.equal(child.parentId, parent.id);
      assert.equal(child.status, 'idle');
      assert.equal(child.type, action);
      assert.equal(micros(asRecord(child.usage).total_cost as number), IMAGE_PRICE);
      children.push({ action, task: child });
    }
    assert.equal(await balanceMicros(gw, { userId }), before - 3n * IMAGE_PRICE, 'each action is charged');

    await gw.app.services.runner.runDue();
    for (const { action, task } of children) {
      const done = await read(task.id);
      assert.equal(done.status, 'done', `${action}: ${JSON.stringify(done)}`);
      assert.equal(done.parentId, parent.id);
      assert.equal(images(done).length, action.startsWith('upscale_') ? 1 : 4, action);
      for (const url of images(done)) assert.equal((await download(gw, url)).contentType, 'image/png');
    }
  });

  test('an unknown action is a 400 naming `action`', async () => {
    const parent = await imagine('a boat');
    await gw.app.services.runner.runDue();
    const response = await postRaw(gw, '/v1/imagegen/action', { key, body: { taskId: parent.id, action: 'upscale_9' } });
    assert.equal(response.status, 400, response.text);
    assert.match(errorA(response.json).message, /action/);
  });
});

describe('image tasks: vendor failures', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('a vendor 400 is not retried: the task fails with an error and the charge is refunded as its own entry', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '5.00' });
    const start = await balanceMicros(gw, { userId });
    gw.simulator.addFault({ status: 400, match: { path: '/v1/images/generations' }, times: 1 });
    const calls = vendorCalls(gw, '/v1/images/generations');
    const task = imageTask((await postOk(gw, '/v1/imagegen/imagine', key, { prompt: 'will be refused' })).body);
    assert.equal(await balanceMicros(gw, { userId }), start - IMAGE_PRICE);

    await gw.app.services.runner.runDue();
    const failed = await getOk(gw, `/v1/imagegen/tasks/${task.id}`, key);
    assert.equal(failed.status, 'failed');
    const error = asRecord(failed.error, 'error of a failed task');
    assert.equal(typeof error.message, 'string');
    assert.ok(String(error.message).length > 0);
    assert.equal(failed.result, null);
    assert.equal(vendorCalls(gw, '/v1/images/generations'), calls + 1, 'a 400 is not tried again');
    assert.equal(await advanceAndRun(gw, 600_000), 0, 'nothing is left to run');

    assert.equal(await balanceMicros(gw, { userId }), start, 'balance back to exactly the starting amount');
    assert.deepEqual(
      (await movementSummary(gw, userId)).map(([kind, amount]) => [kind, amount]),
      [['charge', -IMAGE_PRICE], ['refund', IMAGE_PRICE]],
      'the charge stays and the refund is its own entry',
    );
  });

  test('a vendor 500 is retried after the back-off and then succeeds, charged once', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '5.00' });
    const start = await balanceMicros(gw, { userId });
    gw.simulator.addFault({ status: 500, match: { path: '/v1/images/generations' }, times: 1 });
    const calls = vendorCalls(gw, '/v1/images/generations');
    const task = imageTask((await postOk(gw, '/v1/imagegen/imagine', key, { prompt: 'second time lucky' })).body);

    await gw.app.services.runner.runDue();
    assert.equal(vendorCalls(gw, '/v1/images/generations'), calls + 1);
    const waiting = await getOk(gw, `/v1/imagegen/tasks/${task.id}`, key);
    assert.ok(waiting.status === 'idle' || waiting.status === 'processing', `not failed after a 500: ${JSON.stringify(waiting)}`);
    assert.equal(await gw.app.services.runner.runDue(), 0, 'not retried before the back-off');

    await advanceAndRun(gw, 60_000);
    assert.equal(vendorCalls(gw, '/v1/images/generations'), calls + 2);
    const done = await getOk(gw, `/v1/imagegen/tasks/${task.id}`, key);
    assert.equal(done.status, 'done', JSON.stringify(done));
    assert.equal(images(done).length, 4);
    assert.equal(await balanceMicros(gw, { userId }), start - IMAGE_PRICE, 'charged once, no refund');
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -IMAGE_PRICE, 'gpt-image-1']]);
  });

  test('a vendor that keeps failing with 500: retried a few times, then the task fails and is refunded', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '5.00' });
    const start = await balanceMicros(gw, { userId });
    gw.simulator.addFault({ status: 500, match: { path: '/v1/images/generations' }, times: Infinity });
    try {
      const calls = vendorCalls(gw, '/v1/images/generations');
      const task = imageTask((await postOk(gw, '/v1/imagegen/imagine', key, { prompt: 'never works' })).body);
      await gw.app.services.runner.runDue();
      for (let pass = 0; pass < 20 && (await getOk(gw, `/v1/imagegen/tasks/${task.id}`, key)).status !== 'failed'; pass += 1) await advanceAndRun(gw, 60_000);
      const failed = await getOk(gw, `/v1/imagegen/tasks/${task.id}`, key);
      assert.equal(failed.status, 'failed', JSON.stringify(failed));
      assert.equal(typeof asRecord(failed.error).message, 'string');
      const attempts = vendorCalls(gw, '/v1/images/generations') - calls;
      assert.ok(attempts > 1 && attempts <= 10, `retried, but not without end: ${attempts} attempts`);
      assert.equal(await balanceMicros(gw, { userId }), start, 'refunded');
      assert.deepEqual((await movementSummary(gw, userId)).map(([kind]) => kind), ['charge', 'refund']);
      assert.equal(await advanceAndRun(gw, 3_600_000), 0);
    } finally {
      gw.simulator.reset();
    }
  });

  test('an empty balance is refused with 402 before a task is made', async () => {
    const { key, userId } = await gw.fundedKey({ balance: '0.00' });
    const response = await postRaw(gw, '/v1/imagegen/imagine', { key, body: { prompt: 'no money' } });
    assert.equal(response.status, 402, response.text);
    assert.equal(errorA(response.json).type, 'insufficient_balance_error');
    assert.equal(micros(await gw.balance({ userId })), 0n);
    assert.equal(await gw.app.services.runner.runDue(), 0, 'no task was queued');
  });
});
