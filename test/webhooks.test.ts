import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { VIDEO_FAIL_MARKER } from '../simulator/server.ts';
import { ManualClock } from '../src/lib/clock.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, errorA, postRaw, type JsonRecord } from './helpers/e2e.ts';
import { advanceAndRun, getOk, mediaTaskUrls, postOk } from './helpers/tasks.ts';
import { startWebhookReceiver, type ReceiverBehaviour, type WebhookReceiver } from './helpers/webhook-receiver.ts';

interface Delivery {
  attempt: number;
  status: string;
  httpStatus: number | null;
  error: string | null;
  event: string;
  at: string;
}

async function deliveries(gw: TestGateway, taskId: string): Promise<Delivery[]> {
  const response = await gw.admin<{ data: Delivery[] }>('GET', `/deliveries?taskId=${taskId}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

/** A speech task (done after one runner pass) that reports to `webhookUrl`; returns its id. */
async function taskWithWebhook(gw: TestGateway, key: string, webhookUrl: string, body: JsonRecord = { model: 'tts-1', prompt: 'webhook me' }): Promise<string> {
  const created = await postOk(gw, '/api/v2/media/tasks', key, { ...body, webhook_url: webhookUrl });
  return String(created.body.id);
}

/** The message of an error in shape A or C (SPEC 2.10). */
function errorMessage(body: unknown): string {
  const record = asRecord(body, 'error body');
  return typeof record.message === 'string' ? record.message : errorA(body).message;
}

describe('task webhooks (SPEC 6.2, DESIGN §5)', () => {
  let gw: TestGateway;
  let key: string;
  const receivers: WebhookReceiver[] = [];
  const receiver = async (behaviour?: ReceiverBehaviour): Promise<WebhookReceiver> => {
    const started = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, ...(behaviour ? { behaviour } : {}) });
    receivers.push(started);
    return started;
  };
  const seconds = (): number => Math.floor(gw.clock.now() / 1000);

  before(async () => {
    gw = await startTestGateway();
    ({ key } = await gw.fundedKey({ balance: '20.00' }));
  });
  after(async () => {
    await Promise.all(receivers.map((entry) => entry.close()));
    await gw?.close();
  });

  test('a done task is posted once, signed with the creating key; the body is the SPEC 2.9 object of GET /media/tasks/:id', async () => {
    const hook = await receiver();
    const createdAt = gw.clock.now();
    const id = await taskWithWebhook(gw, key, hook.url);
    await gw.app.services.runner.runDue();
    assert.equal(hook.received.length, 1);
    const [delivery] = hook.received;
    assert.ok(delivery?.verified, 'verifySignature accepts the raw body with the API key');
    assert.equal(delivery.headers['x-tollgate-event'], 'task.done');
    assert.equal(delivery.headers['x-tollgate-delivery'], id);
    assert.match(String(delivery.headers['x-tollgate-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
    assert.equal(delivery.t, seconds(), 't is the injected clock in Unix seconds');
    assert.match(String(delivery.headers['content-type']), /^application\/json/);
    assert.equal(mediaTaskUrls(delivery.json, { id, model: 'tts-1', status: 'done', createdAtMs: createdAt }).length, 1);
    assert.deepEqual(delivery.json, await getOk(gw, `/media/tasks/${id}`, key), 'the same object as GET /media/tasks/:id');
    const recorded = await deliveries(gw, id);
    assert.deepEqual(recorded.map((entry) => [entry.attempt, entry.status, entry.httpStatus, entry.event]), [[1, 'delivered', 200, 'task.done']]);
    assert.equal(await advanceAndRun(gw, 3_600_000), 0, 'a delivered webhook is not sent again');
    assert.equal(hook.received.length, 1);
  });

  test('a failed task is posted as task.failed', async () => {
    gw.simulator.options.videoPollsToComplete = 0;
    const hook = await receiver();
    const id = await taskWithWebhook(gw, key, hook.url, { model: 'sora-2', prompt: `broken ${VIDEO_FAIL_MARKER}` });
    await gw.app.services.runner.runDue();
    assert.equal(hook.received.length, 1);
    const [delivery] = hook.received;
    assert.ok(delivery?.verified);
    assert.equal(delivery.headers['x-tollgate-event'], 'task.failed');
    assert.equal(delivery.headers['x-tollgate-delivery'], id);
    assert.deepEqual(mediaTaskUrls(delivery.json, { id, status: 'failed', model: 'sora-2' }), []);
  });

  test('a receiver failing three times gets the fourth attempt, at +5 s, +20 s and +60 s; signature fresh, delivery id kept', async () => {
    const hook = await receiver((attempt) => (attempt <= 3 ? 500 : 200));
    const id = await taskWithWebhook(gw, key, hook.url);
    const start = gw.clock.now();
    await gw.app.services.runner.runDue();
    assert.equal(hook.received.length, 1);

    for (const [pause, expected] of [[5_000, 2], [20_000, 3], [60_000, 4]] as const) {
      await advanceAndRun(gw, pause - 1);
      assert.equal(hook.received.length, expected - 1, `nothing is retried before +${pause / 1000} s`);
      await advanceAndRun(gw, 1);
      assert.equal(hook.received.length, expected, `the retry comes at +${pause / 1000} s`);
    }
    await advanceAndRun(gw, 3_600_000);
    assert.equal(hook.received.length, 4, 'no attempt after the delivered one');

    const offsets = [0, 5_000, 25_000, 85_000];
    const recorded = await deliveries(gw, id);
    assert.deepEqual(
      recorded.map((entry) => [entry.attempt, entry.status, entry.httpStatus, Date.parse(entry.at) - start]),
      [[1, 'failed', 500, 0], [2, 'failed', 500, 5_000], [3, 'failed', 500, 25_000], [4, 'delivered', 200, 85_000]],
    );
    hook.received.forEach((delivery, index) => {
      assert.ok(delivery.verified, `attempt ${index + 1} verifies`);
      assert.equal(delivery.headers['x-tollgate-delivery'], id, `attempt ${index + 1} keeps the delivery id`);
      assert.equal(delivery.headers['x-tollgate-event'], 'task.done');
      assert.equal(delivery.t, Math.floor((start + offsets[index]!) / 1000), `attempt ${index + 1} is signed at its own time`);
      assert.deepEqual(delivery.rawBody, hook.received[0]!.rawBody, 'the same task object each time');
    });
    assert.equal(new Set(hook.received.map((delivery) => delivery.v1)).size, 4, 'a fresh signature on every attempt');
  });

  test('a receiver failing five times: the delivery is marked failed after the 180 s retry and never tried again', async () => {
    const hook = await receiver(() => 503);
    const id = await taskWithWebhook(gw, key, hook.url);
    const start = gw.clock.now();
    await gw.app.services.runner.runDue();
    for (const pause of [5_000, 20_000, 60_000]) await advanceAndRun(gw, pause);
    assert.equal(hook.received.length, 4);
    await advanceAndRun(gw, 179_999);
    assert.equal(hook.received.length, 4, 'the last retry waits 180 s');
    await advanceAndRun(gw, 1);
    assert.equal(hook.received.length, 5);
    await advanceAndRun(gw, 24 * 3_600_000);
    assert.equal(hook.received.length, 5, 'no attempt after the fifth');

    const recorded = await deliveries(gw, id);
    assert.deepEqual(
      recorded.map((entry) => [entry.attempt, entry.status, entry.httpStatus, Date.parse(entry.at) - start]),
      [[1, 'failed', 503, 0], [2, 'failed', 503, 5_000], [3, 'failed', 503, 25_000], [4, 'failed', 503, 85_000], [5, 'failed', 503, 265_000]],
    );
    const job = await gw.storage.db.selectFrom('jobs').select(['status']).where('kind', '=', 'webhook.task').where('subject_id', '=', id).executeTakeFirst();
    assert.equal(job?.status, 'failed', 'the delivery job is marked failed');
  });
});

describe('task webhooks: a receiver that never answers', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ config: { webhookTimeoutMs: 300 } });
  });
  after(async () => {
    await gw?.close();
  });

  test('times out; the attempt is recorded failed and retried later', async () => {
    const { key } = await gw.fundedKey();
    const hook = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => 'hang' });
    try {
      const id = await taskWithWebhook(gw, key, hook.url);
      const started = Date.now();
      await gw.app.services.runner.runDue();
      assert.ok(Date.now() - started < 5_000, 'the runner is not held by the receiver');
      assert.equal(hook.received.length, 1);
      assert.ok(hook.received[0]?.verified);
      const [first] = await deliveries(gw, id);
      assert.equal(first?.status, 'failed');
      assert.equal(first.httpStatus, null);
      assert.match(String(first.error), /300 ?ms|time/i);

      await advanceAndRun(gw, 5_000);
      assert.equal(hook.received.length, 2, 'retried at +5 s');
      assert.deepEqual((await deliveries(gw, id)).map((entry) => entry.status), ['failed', 'failed']);
    } finally {
      await hook.close();
    }
  });
});

describe('task webhooks survive a restart (durable jobs)', () => {
  test('a retry pending when the gateway stops is delivered by the next gateway on the same database', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'tollgate-webhooks-'));
    const database = { url: `sqlite:${join(directory, 't.db')}` };
    const clock = new ManualClock(Date.parse('2026-11-01T00:00:00Z'));
    let key = '';
    const hook = await startWebhookReceiver({ apiKey: () => key, clock, behaviour: (attempt) => (attempt === 1 ? 500 : 200) });
    let first: TestGateway | undefined;
    let second: TestGateway | undefined;
    try {
      first = await startTestGateway({ database, clock });
      ({ key } = await first.fundedKey());
      const id = await taskWithWebhook(first, key, hook.url);
      await first.app.services.runner.runDue();
      assert.equal(hook.received.length, 1);
      await first.close();
      first = undefined;

      second = await startTestGateway({ database, clock });
      await advanceAndRun(second, 4_999);
      assert.equal(hook.received.length, 1, 'the pause of 5 s still holds after the restart');
      await advanceAndRun(second, 1);
      assert.equal(hook.received.length, 2, 'the new gateway delivers the retry');
      const delivery = hook.received[1]!;
      assert.ok(delivery.verified, 'signed with the creating key after the restart');
      assert.equal(delivery.headers['x-tollgate-delivery'], id);
      assert.deepEqual((await deliveries(second, id)).map((entry) => [entry.attempt, entry.status]), [[1, 'failed'], [2, 'delivered']]);
    } finally {
      await first?.close();
      await second?.close();
      await hook.close();
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('webhook_url and the outbound URL guard', () => {
  let guarded: TestGateway;
  let open: TestGateway;

  before(async () => {
    guarded = await startTestGateway({ config: { allowPrivateUrls: false } });
    open = await startTestGateway({ config: { allowPrivateUrls: true } });
  });
  after(async () => {
    await guarded?.close();
    await open?.close();
  });

  for (const url of ['http://10.0.0.1/hook', 'http://127.0.0.1/hook']) {
    test(`${url} is refused with 400 when private URLs are not allowed, and nothing is charged`, async () => {
      const { key, userId } = await guarded.fundedKey();
      const before = await balanceMicros(guarded, { userId });
      for (const [path, body] of [
        ['/api/v2/media/tasks', { model: 'tts-1', prompt: 'hi', webhook_url: url }],
        ['/v1/media/create', { model: 'tts-1', prompt: 'hi', webhook_url: url }],
        ['/v1/imagegen/imagine', { prompt: 'hi', webhook_url: url }],
      ] as const) {
        const response = await postRaw(guarded, path, { key, body });
        assert.equal(response.status, 400, `${path}: ${response.text}`);
        assert.match(errorMessage(response.json), /webhook_url/, path);
      }
      assert.equal(await balanceMicros(guarded, { userId }), before);
      assert.equal(await guarded.app.services.runner.runDue(), 0, 'no task was queued');
    });

    test(`${url} is accepted when private URLs are allowed`, async () => {
      const { key } = await open.fundedKey();
      const created = await postOk(open, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'hi', webhook_url: url });
      assert.equal(created.body.status, 'idle');
      assert.ok(asArray(created.body.result).length === 0);
    });
  }
});
