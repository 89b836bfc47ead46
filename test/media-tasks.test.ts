import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PIXEL_PNG_BASE64, speechAudio, VIDEO_FAIL_MARKER, videoContent } from '../simulator/server.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, postRaw, type JsonRecord } from './helpers/e2e.ts';
import { advanceAndRun, download, errorC, getOk, mediaTaskUrls, movements, movementSummary, postOk, vendorCalls } from './helpers/tasks.ts';

/** catalog/models.json prices of one task. */
const PRICE = { 'gpt-image-1': micros('0.04'), 'dall-e-2': micros('0.02'), 'tts-1': micros('0.015'), 'sora-2': micros('0.40'), 'sora-1-preview': micros('0.80') };
const CREATE_PATHS = ['/api/v2/media/tasks', '/v1/media/create'] as const;

function assertRedirected(headers: Headers, requested: string, served: string): void {
  assert.equal(headers.get('deprecation'), 'true');
  assert.ok(headers.get('sunset'), 'Sunset header');
  assert.match(headers.get('warning') ?? '', /^299 - ".*"$/);
  assert.equal(headers.get('x-model-requested'), requested);
  assert.equal(headers.get('x-model-served'), served);
}

describe('media models and prices (SPEC 4.10, 9.6)', () => {
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

  for (const path of ['/v1/media/models', '/api/v2/media/models']) {
    test(`GET ${path} lists the media and image models with the three retirement fields`, async () => {
      const list = await getOk(gw, path, key);
      const models = new Map(asArray(list.data, 'data').map((entry) => [String(asRecord(entry).id), asRecord(entry)]));
      for (const id of ['gpt-image-1', 'dall-e-2', 'tts-1', 'sora-2', 'sora-1-preview']) assert.ok(models.has(id), `${id} is listed`);
      assert.ok(!models.has('gpt-4o') && !models.has('whisper-1'), 'text and transcription models are not media models');
      for (const model of models.values()) {
        for (const field of ['deprecated', 'deprecated_at', 'deprecation_redirect_to']) assert.ok(field in model, `${String(model.id)} has ${field}`);
      }
      const dalle = models.get('dall-e-2')!;
      assert.equal(dalle.deprecated, true);
      assert.equal(Date.parse(String(dalle.deprecated_at)), Date.parse('2026-05-12T00:00:00Z'));
      assert.equal(dalle.deprecation_redirect_to, 'gpt-image-1');
      const preview = models.get('sora-1-preview')!;
      assert.equal(preview.deprecated, true);
      assert.equal(preview.deprecation_redirect_to, null);
      const sora = models.get('sora-2')!;
      assert.deepEqual([sora.deprecated, sora.deprecated_at, sora.deprecation_redirect_to], [false, null, null]);
    });
  }

  test('POST /api/v2/media/price: the price of one task; a retired model with an analogue is priced as itself with Deprecation headers', async () => {
    const current = await postOk(gw, '/api/v2/media/price', key, { model: 'gpt-image-1' });
    assert.equal(micros(String(current.body.price)), PRICE['gpt-image-1']);
    assert.equal(current.headers.get('deprecation'), null);

    const retired = await postOk(gw, '/api/v2/media/price', key, { model: 'dall-e-2' });
    assert.equal(micros(String(retired.body.price)), PRICE['dall-e-2'], 'billing follows the requested model');
    assertRedirected(retired.headers, 'dall-e-2', 'gpt-image-1');
  });

  test('POST /api/v2/media/price for a retired model without analogue: 410 shape C, code 15', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await postRaw(gw, '/api/v2/media/price', { key, body: { model: 'sora-1-preview' } });
    assert.equal(response.status, 410, response.text);
    const error = errorC(response.json);
    assert.equal(error.code, 15);
    assert.equal(error.original_id, 'sora-1-preview');
    assert.ok(error.message.length > 0);
    assert.equal(await balanceMicros(gw, { userId }), before, 'asking for a price costs nothing');
  });
});

describe('media tasks (SPEC 2.9, 4.10, 9.6)', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '20.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  const create = async (path: string, body: JsonRecord, as = key): Promise<{ body: JsonRecord; headers: Headers; id: string }> => {
    const response = await postOk(gw, path, as, body);
    return { ...response, id: String(response.body.id) };
  };
  const readTask = (id: string, as = key): Promise<JsonRecord> => getOk(gw, `/media/tasks/${id}`, as);

  for (const path of CREATE_PATHS) {
    test(`${path}: an image task is created idle, charged, and done after the runner with a PNG from the gateway`, async () => {
      const before = await balanceMicros(gw, { userId });
      const createdAt = gw.clock.now();
      const created = await create(path, { model: 'gpt-image-1', prompt: 'a paper crane' });
      assert.deepEqual(mediaTaskUrls(created.body, { model: 'gpt-image-1', status: 'idle', createdAtMs: createdAt }), []);
      assert.equal(await balanceMicros(gw, { userId }), before - PRICE['gpt-image-1']);

      await gw.app.services.runner.runDue();
      const done = await readTask(created.id);
      const urls = mediaTaskUrls(done, { id: created.id, model: 'gpt-image-1', status: 'done', createdAtMs: createdAt });
      assert.equal(urls.length, 1);
      const file = await download(gw, urls[0]!);
      assert.equal(file.contentType, 'image/png');
      assert.deepEqual(file.data, Buffer.from(PIXEL_PNG_BASE64, 'base64'));
    });

    test(`${path}: a retired model with an analogue (dall-e-2) is served by gpt-image-1 and billed as dall-e-2`, async () => {
      const before = await balanceMicros(gw, { userId });
      const created = await create(path, { model: 'dall-e-2', prompt: 'an old-style drawing' });
      assertRedirected(created.headers, 'dall-e-2', 'gpt-image-1');
      assert.equal(created.body.model, 'dall-e-2', 'the body keeps the requested model');
      const warnings = asArray(created.body.warnings, 'warnings');
      assert.equal(warnings.length, 1);
      assert.equal(asRecord(warnings[0]).code, 'DEPRECATED_MODEL');
      assert.equal(await balanceMicros(gw, { userId }), before - PRICE['dall-e-2']);

      await gw.app.services.runner.runDue();
      assert.equal(asRecord(gw.simulator.lastRequest('/v1/images/generations')?.json).model, 'gpt-image-1', 'the vendor is asked for the analogue');
      assert.equal((await readTask(created.id)).status, 'done');
    });

    test(`${path}: a retired model without analogue (sora-1-preview) is a 410 in shape C and not charged`, async () => {
      const before = await balanceMicros(gw, { userId });
      const entries = (await movements(gw, userId)).length;
      const response = await postRaw(gw, path, { key, body: { model: 'sora-1-preview', prompt: 'an old video' } });
      assert.equal(response.status, 410, response.text);
      const error = errorC(response.json);
      assert.equal(error.code, 15);
      assert.equal(error.original_id, 'sora-1-preview');
      assert.equal(await balanceMicros(gw, { userId }), before);
      assert.equal((await movements(gw, userId)).length, entries, 'no ledger entry');
      assert.equal(await gw.app.services.runner.runDue(), 0, 'no task was queued');
    });
  }

  test('speech (tts-1): the audio of the vendor, stored and served by the gateway', async () => {
    const prompt = 'Hello from the speech task';
    const before = await balanceMicros(gw, { userId });
    const created = await create('/api/v2/media/tasks', { model: 'tts-1', prompt });
    assert.equal(await balanceMicros(gw, { userId }), before - PRICE['tts-1']);
    await gw.app.services.runner.runDue();
    const urls = mediaTaskUrls(await readTask(created.id), { model: 'tts-1', status: 'done' });
    assert.equal(urls.length, 1);
    const file = await download(gw, urls[0]!);
    assert.equal(file.contentType, 'audio/mpeg');
    assert.deepEqual(file.data, speechAudio(prompt, 'alloy', 'mp3'));
    const forwarded = asRecord(gw.simulator.lastRequest('/v1/audio/speech')?.json);
    assert.equal(forwarded.model, 'tts-1');
    assert.equal(forwarded.input, prompt);
  });

  test('video (sora-2): the vendor is polled across runner passes as the clock moves, then the video is served', async () => {
    gw.simulator.options.videoPollsToComplete = 2;
    const prompt = 'a slow pan over mountains';
    const before = await balanceMicros(gw, { userId });
    const created = await create('/v1/media/create', { model: 'sora-2', prompt });
    assert.equal(await balanceMicros(gw, { userId }), before - PRICE['sora-2']);

    await gw.app.services.runner.runDue();
    assert.equal(vendorCalls(gw, '/v1/videos'), 1, 'the video was created at the vendor');
    const running = await readTask(created.id);
    assert.ok(running.status !== 'done' && running.status !== 'failed', `still running: ${JSON.stringify(running)}`);
    assert.deepEqual(mediaTaskUrls(running, {}), []);
    assert.equal(await gw.app.services.runner.runDue(), 0, 'no poll before the clock moves');

    let passes = 0;
    while ((await readTask(created.id)).status !== 'done' && passes < 5) {
      await advanceAndRun(gw, 2_000);
      passes += 1;
    }
    assert.equal(passes, 2, 'two polls with videoPollsToComplete = 2');
    const urls = mediaTaskUrls(await readTask(created.id), { status: 'done', model: 'sora-2' });
    const file = await download(gw, urls[0]!);
    assert.equal(file.contentType, 'video/mp4');
    assert.deepEqual(file.data, videoContent(prompt, '4', '720x1280'));
    assert.equal(await balanceMicros(gw, { userId }), before - PRICE['sora-2'], 'charged once');
  });

  test('a video whose generation fails at the vendor (SIM_FAIL) fails and is refunded', async () => {
    gw.simulator.options.videoPollsToComplete = 1;
    const { key, userId } = await gw.fundedKey({ balance: '2.00' });
    const start = await balanceMicros(gw, { userId });
    const created = await create('/api/v2/media/tasks', { model: 'sora-2', prompt: `a doomed clip ${VIDEO_FAIL_MARKER}` }, key);
    assert.equal(await balanceMicros(gw, { userId }), start - PRICE['sora-2']);
    await gw.app.services.runner.runDue();
    for (let pass = 0; pass < 4 && (await readTask(created.id, key)).status !== 'failed'; pass += 1) await advanceAndRun(gw, 2_000);
    const failed = await readTask(created.id, key);
    assert.deepEqual(mediaTaskUrls(failed, { status: 'failed', model: 'sora-2' }), []);
    assert.equal(await balanceMicros(gw, { userId }), start, 'refunded to exactly the starting amount');
    assert.deepEqual(
      (await movementSummary(gw, userId)).map(([kind, amount]) => [kind, amount]),
      [['charge', -PRICE['sora-2']], ['refund', PRICE['sora-2']]],
    );
  });

  test("GET /media/tasks/:id of another user's task is a 404; without a key 401", async () => {
    const created = await create('/api/v2/media/tasks', { model: 'tts-1', prompt: 'mine' });
    const stranger = await gw.fundedKey();
    const response = await fetch(`${gw.url}/media/tasks/${created.id}`, { headers: { authorization: `Bearer ${stranger.key}` } });
    assert.equal(response.status, 404);
    assert.equal((await fetch(`${gw.url}/media/tasks/${created.id}`)).status, 401);
  });
});

describe('POST /v1/media/generate (SPEC 9.6: no redirect, no 410)', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;

  before(async () => {
    // The request waits for its task while the job runner works in the background, as in production.
    gw = await startTestGateway({ runJobs: true });
    gw.simulator.options.videoPollsToComplete = 0;
    ({ key, userId } = await gw.fundedKey({ balance: '10.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  test('answers with the finished task', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await postOk(gw, '/v1/media/generate', key, { model: 'gpt-image-1', prompt: 'a quick sketch' });
    const urls = mediaTaskUrls(response.body, { model: 'gpt-image-1', status: 'done' });
    assert.equal(urls.length, 1);
    assert.equal((await download(gw, urls[0]!)).contentType, 'image/png');
    assert.equal(await balanceMicros(gw, { userId }), before - PRICE['gpt-image-1']);
  });

  test('a retired model without analogue (sora-1-preview) is served as it is: not a 410, not redirected', async () => {
    const prompt = 'a preview-era clip';
    const before = await balanceMicros(gw, { userId });
    const response = await postRaw(gw, '/v1/media/generate', { key, body: { model: 'sora-1-preview', prompt } });
    assert.notEqual(response.status, 410, `SPEC 9.6: generate never answers 410: ${response.text}`);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('deprecation'), null, 'no redirect headers');
    assert.equal(response.headers.get('x-model-served'), null);
    const urls = mediaTaskUrls(response.json, { model: 'sora-1-preview', status: 'done' });
    const createdVideo = gw.simulator.requests.filter((request) => request.method === 'POST' && request.path === '/v1/videos').at(-1);
    assert.equal(asRecord(createdVideo?.json, 'POST /v1/videos body').model, 'sora-1-preview', 'the vendor is asked for the model itself');
    assert.equal((await download(gw, urls[0]!)).contentType, 'video/mp4');
    assert.equal(await balanceMicros(gw, { userId }), before - PRICE['sora-1-preview'], 'billed as the requested model');
  });

  test('a retired model with an analogue (dall-e-2) is not redirected either', async () => {
    const response = await postRaw(gw, '/v1/media/generate', { key, body: { model: 'dall-e-2', prompt: 'a plain drawing' } });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('deprecation'), null);
    assert.equal(asRecord(gw.simulator.lastRequest('/v1/images/generations')?.json).model, 'dall-e-2');
    mediaTaskUrls(response.json, { model: 'dall-e-2', status: 'done' });
  });
});

describe('POST /v1/media/generate waits for its own task, never runs the queue itself', () => {
  test("another tenant's due task is not run by the request; after the wait the task is answered 202 as it stands", async () => {
    const gw = await startTestGateway({ config: { generateWaitMs: 300 } });
    try {
      const other = await gw.fundedKey({ balance: '10.00' });
      const waiting = await postOk(gw, '/api/v2/media/tasks', other.key, { model: 'gpt-image-1', prompt: 'queued by someone else' });
      const { key } = await gw.fundedKey({ balance: '10.00' });
      const response = await postRaw(gw, '/v1/media/generate', { key, body: { model: 'gpt-image-1', prompt: 'mine' } });
      assert.equal(response.status, 202, response.text);
      mediaTaskUrls(response.json, { model: 'gpt-image-1', status: 'idle' });
      assert.equal(vendorCalls(gw, '/v1/images/generations'), 0, 'no job ran on the request path');
      const stillWaiting = await getOk(gw, `/api/v2/media/tasks/${String(waiting.body.id)}`, other.key);
      assert.equal(stillWaiting.status, 'idle', "the other tenant's task is left to the job runner");

      assert.equal(await gw.app.services.runner.runDue(), 2, 'the runner takes both tasks');
      const generated = await getOk(gw, `/api/v2/media/tasks/${String(asRecord(response.json).id)}`, key);
      assert.equal(generated.status, 'done');
    } finally {
      await gw.close();
    }
  });

  test('the request answers 200 as soon as the job runner finishes its task', async () => {
    const gw = await startTestGateway({ config: { generateWaitMs: 60_000 } });
    try {
      const { key } = await gw.fundedKey({ balance: '10.00' });
      let answered = false;
      const pending = postRaw(gw, '/v1/media/generate', { key, body: { model: 'gpt-image-1', prompt: 'a quick sketch' } }).finally(() => {
        answered = true;
      });
      // The runner here is driven by hand: it runs the task once the request has created it, and the request hears of it.
      let ran = 0;
      while (!answered && ran === 0) {
        ran = await gw.app.services.runner.runDue();
        if (ran === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      const response = await pending;
      assert.equal(ran, 1, 'the task was run by the runner, not by the request');
      assert.equal(response.status, 200, response.text);
      const urls = mediaTaskUrls(response.json, { model: 'gpt-image-1', status: 'done' });
      assert.equal((await download(gw, urls[0]!)).contentType, 'image/png');
    } finally {
      await gw.close();
    }
  });
});
