import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { errorA } from './helpers/e2e.ts';
import { startTestGateway, TEST_MASTER_KEY, type TestGateway } from './helpers/gateway.ts';
import { advanceAndRun, postOk } from './helpers/tasks.ts';
import { startWebhookReceiver, type ReceiverBehaviour, type WebhookReceiver } from './helpers/webhook-receiver.ts';

interface DeliveryRow {
  id: string;
  taskId: string;
  attempt: number;
  status: 'delivered' | 'failed';
  httpStatus: number | null;
  state?: 'pending' | 'failed' | 'delivered';
}

interface Page {
  object: string;
  data: DeliveryRow[];
  next_cursor: string | null;
}

/** The automatic retries after a first failed attempt (webhook-dispatcher.ts RETRY_DELAYS_MS). */
const RETRY_PAUSES = [5_000, 20_000, 60_000, 180_000];

/**
 * GET /admin/v1/deliveries without `taskId` (the console's deliveries page): each task's latest attempt, newest first, with
 * where its webhook stands — `failed` (for good: nothing queued), `pending` (a delivery queued or running), `delivered` —
 * filtered by `state` and paged by cursor. With `taskId` it stays DESIGN §4's list of that task's attempts.
 */
for (const database of ['sqlite', 'postgres'] as const) {
  describe(`the admin list of webhook deliveries by state (${database})`, () => {
    let gw: TestGateway;
    let key: string;
    const receivers: WebhookReceiver[] = [];
    const receiver = async (behaviour: ReceiverBehaviour): Promise<WebhookReceiver> => {
      const started = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour });
      receivers.push(started);
      return started;
    };
    const task = async (hook: WebhookReceiver): Promise<string> => String((await postOk(gw, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'report to me', webhook_url: hook.url })).body.id);
    const list = async (query: string): Promise<Page> => {
      const response = await gw.admin<Page>('GET', `/deliveries${query}`);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body;
    };
    const rows = (page: Page) => page.data.map((row) => [row.taskId, row.attempt, row.status, row.state]);

    let failedTask: string;
    let retryingTask: string;
    let deliveredTask: string;

    before(async () => {
      gw = await startTestGateway({ database });
      ({ key } = await gw.fundedKey({ balance: '20.00' }));
      // Three webhooks: one that fails for good (every retry used), one delivered, one still being retried.
      failedTask = await task(await receiver(() => 503));
      await gw.app.services.runner.runDue();
      for (const pause of RETRY_PAUSES) await advanceAndRun(gw, pause);
      deliveredTask = await task(await receiver(() => 200));
      await gw.app.services.runner.runDue();
      retryingTask = await task(await receiver((attempt) => (attempt === 1 ? 500 : 200)));
      await gw.app.services.runner.runDue();
    });
    after(async () => {
      await Promise.all(receivers.map((entry) => entry.close()));
      await gw?.close();
    });

    test("every task's latest attempt, newest first, with its webhook's state", async () => {
      const page = await list('');
      assert.equal(page.object, 'list');
      assert.deepEqual(rows(page), [
        [retryingTask, 1, 'failed', 'pending'],
        [deliveredTask, 1, 'delivered', 'delivered'],
        [failedTask, 5, 'failed', 'failed'],
      ]);
      assert.equal(page.next_cursor, null);
    });

    test('filtered by state', async () => {
      assert.deepEqual(rows(await list('?state=failed')), [[failedTask, 5, 'failed', 'failed']]);
      assert.deepEqual(rows(await list('?state=pending')), [[retryingTask, 1, 'failed', 'pending']]);
      assert.deepEqual(rows(await list('?state=delivered')), [[deliveredTask, 1, 'delivered', 'delivered']]);
    });

    test('pages by cursor without repeating a row', async () => {
      const first = await list('?limit=2');
      assert.equal(first.data.length, 2);
      assert.ok(first.next_cursor, 'a next page');
      const second = await list(`?limit=2&cursor=${encodeURIComponent(first.next_cursor)}`);
      assert.deepEqual([...first.data, ...second.data].map((row) => row.taskId), [retryingTask, deliveredTask, failedTask]);
      assert.equal(second.next_cursor, null);
    });

    test("with taskId: that task's attempts, oldest first, as before", async () => {
      const page = await list(`?taskId=${failedTask}`);
      assert.deepEqual(page.data.map((row) => [row.attempt, row.status]), [1, 2, 3, 4, 5].map((attempt) => [attempt, 'failed']));
    });

    test("the operator's retry moves a webhook from failed to pending, and its delivery to delivered", async () => {
      const [latest] = (await list('?state=failed')).data;
      assert.equal(latest?.taskId, failedTask);
      assert.equal((await gw.admin('POST', `/deliveries/${latest.id}/retry`)).status, 200);
      assert.deepEqual(rows(await list('?state=failed')), []);
      assert.deepEqual((await list('?state=pending')).data.map((row) => row.taskId).sort(), [failedTask, retryingTask].sort());
      // The retrying webhook's own schedule delivers it (its receiver answers 200 from the second request on).
      await advanceAndRun(gw, RETRY_PAUSES[0]!);
      assert.deepEqual(rows(await list('?state=delivered')), [
        [retryingTask, 2, 'delivered', 'delivered'],
        [deliveredTask, 1, 'delivered', 'delivered'],
      ]);
      assert.deepEqual(rows(await list('?state=pending')), [[failedTask, 6, 'failed', 'pending']], 'its receiver still fails: the retry made attempt 6, and its own retries follow');
    });

    test('a state or cursor it does not know is a 400 in shape A; without the admin token a 401', async () => {
      for (const query of ['?state=lost', '?cursor=not-a-cursor', '?limit=0', '?limit=101']) {
        const response = await gw.admin('GET', `/deliveries${query}`);
        assert.equal(response.status, 400, `${query}: ${JSON.stringify(response.body)}`);
        errorA(response.body);
      }
      const anonymous = await fetch(`${gw.url}/admin/v1/deliveries?state=failed`);
      assert.equal(anonymous.status, 401);
    });
  });
}

/** `tollgate deliveries list --state failed` is the same service call as the admin API's list. */
test('the CLI lists the webhooks that failed for good, as the admin API does', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const env = { ...process.env, DATA_DIR: dir, DATABASE_URL: `sqlite:${join(dir, 'cli.db')}`, TOLLGATE_LOG_LEVEL: 'silent', TOLLGATE_SECRET_KEY: TEST_MASTER_KEY.toString('hex') };
  const cli = async (...args: string[]): Promise<Page> => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(import.meta.dirname, '..', 'bin', 'tollgate.js'), ...args], { env });
    return JSON.parse(stdout) as Page;
  };
  const gw = await startTestGateway({ database: { url: env.DATABASE_URL } });
  let hook: WebhookReceiver | undefined;
  try {
    const { key } = await gw.fundedKey({ balance: '5.00' });
    hook = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => 500 });
    const taskId = String((await postOk(gw, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'cli', webhook_url: hook.url })).body.id);
    await gw.app.services.runner.runDue();
    for (const pause of RETRY_PAUSES) await advanceAndRun(gw, pause);
    const fromApi = await gw.admin<Page>('GET', '/deliveries?state=failed');
    const fromCli = await cli('deliveries', 'list', '--state', 'failed');
    assert.deepEqual(fromCli.data.map((row) => [row.taskId, row.attempt, row.state]), [[taskId, 5, 'failed']]);
    assert.deepEqual(fromCli, fromApi.body);
    assert.deepEqual((await cli('deliveries', 'list', '--state', 'delivered')).data, []);
    await assert.rejects(cli('deliveries', 'list', '--state', 'lost'), /one of pending, failed, delivered/);
  } finally {
    await hook?.close();
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
