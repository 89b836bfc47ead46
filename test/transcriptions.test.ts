import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { toFile } from 'openai';
import { transcriptionText } from '../simulator/server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { asArray, asRecord, balanceMicros, errorA, openAiClient, readRaw, type JsonRecord, type RawResponse } from './helpers/e2e.ts';
import { download, errorC, getOk, mediaTaskUrls, movementSummary, perMinuteMicros, wavOfSeconds } from './helpers/tasks.ts';
import { startWebhookReceiver } from './helpers/webhook-receiver.ts';

/** 45 s of audio: the WAV header and the vendor (simulator) agree on it. */
const SECONDS = 45;
const AUDIO = wavOfSeconds(SECONDS);
const TEXT = transcriptionText(AUDIO.length);
/** catalog/models.json per-minute prices. */
const WHISPER_1 = perMinuteMicros('0.006', SECONDS);
const WHISPER_LEGACY = perMinuteMicros('0.010', SECONDS);

async function transcribe(gw: TestGateway, key: string | undefined, fields: Record<string, string>, audio: Buffer | null = AUDIO): Promise<RawResponse> {
  const form = new FormData();
  if (audio) form.set('file', new Blob([new Uint8Array(audio)], { type: 'audio/wav' }), 'a.wav');
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  const response = await fetch(`${gw.url}/v1/audio/transcriptions`, {
    method: 'POST',
    headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
    body: form,
  });
  return readRaw(response);
}

/** The model field of the last multipart request the vendor received. */
function forwardedModel(gw: TestGateway): string | undefined {
  const body = gw.simulator.lastRequest('/v1/audio/transcriptions')?.body ?? '';
  return /name="model"\r\n\r\n([^\r\n]+)/.exec(body)?.[1];
}

describe('POST /v1/audio/transcriptions, OpenAI-compatible mode', () => {
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

  test('the official SDK: json (default) in the vendor shape, charged per minute on the seconds reported', async () => {
    const before = await balanceMicros(gw, { userId });
    const client = openAiClient(gw, key);
    const result = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1' });
    assert.equal(result.text, TEXT);
    const usage = asRecord((result as unknown as JsonRecord).usage, 'usage');
    assert.equal(usage.type, 'duration');
    assert.equal(usage.seconds, SECONDS);
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1);
    assert.deepEqual(await movementSummary(gw, userId), [['charge', -WHISPER_1, 'whisper-1']], 'one charge, for whisper-1');
    assert.equal(forwardedModel(gw), 'whisper-1');
  });

  test('the official SDK: response_format text comes back as the plain transcript', async () => {
    const before = await balanceMicros(gw, { userId });
    const client = openAiClient(gw, key);
    const text = await client.audio.transcriptions.create({ file: await toFile(AUDIO, 'a.wav'), model: 'whisper-1', response_format: 'text' });
    assert.equal(String(text).trim(), TEXT);
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1);
  });

  const stamp = (separator: string): string => `00:00:00${separator}000 --> 00:00:${String(SECONDS).padStart(2, '0')}${separator}000`;
  const plainFormats: Array<[string, string]> = [
    ['text', `${TEXT}\n`],
    ['srt', `1\n${stamp(',')}\n${TEXT}\n\n`],
    ['vtt', `WEBVTT\n\n${stamp('.')}\n${TEXT}\n\n`],
  ];
  for (const [format, expected] of plainFormats) {
    test(`fetch + FormData: response_format ${format} is the vendor's text, charged per minute`, async () => {
      const before = await balanceMicros(gw, { userId });
      const response = await transcribe(gw, key, { model: 'whisper-1', response_format: format });
      assert.equal(response.status, 200, response.text);
      assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      assert.equal(response.text, expected);
      assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1);
    });
  }

  test('fetch + FormData: verbose_json keeps the vendor fields (duration, segments, language)', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await transcribe(gw, key, { model: 'whisper-1', response_format: 'verbose_json', language: 'en' });
    assert.equal(response.status, 200, response.text);
    const body = asRecord(response.json);
    assert.equal(body.text, TEXT);
    assert.equal(body.duration, SECONDS);
    assert.equal(body.language, 'en');
    assert.equal(asArray(body.segments).length, 1);
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1);
  });

  test('a retired model with an analogue (whisper-0-legacy) is served by whisper-1 and billed as itself', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await transcribe(gw, key, { model: 'whisper-0-legacy' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('deprecation'), 'true');
    assert.equal(response.headers.get('x-model-requested'), 'whisper-0-legacy');
    assert.equal(response.headers.get('x-model-served'), 'whisper-1');
    const body = asRecord(response.json);
    assert.equal(body.text, TEXT);
    assert.equal(asRecord(asArray(body.warnings)[0]).code, 'DEPRECATED_MODEL');
    assert.equal(forwardedModel(gw), 'whisper-1');
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_LEGACY);
  });

  test('a retired model without analogue (whisper-0-retired) is a 410 in shape A, not charged', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await transcribe(gw, key, { model: 'whisper-0-retired' });
    assert.equal(response.status, 410, response.text);
    const error = errorA(response.json);
    assert.equal(error.type, 'model_deprecated');
    assert.equal(error.code, 'model_deprecated');
    assert.equal(error.param, 'model');
    assert.equal(await balanceMicros(gw, { userId }), before);
  });

  test('errors: no key 401, no file 400 naming `file`', async () => {
    const anonymous = await transcribe(gw, undefined, { model: 'whisper-1' });
    assert.equal(anonymous.status, 401);
    assert.equal(errorA(anonymous.json).message, 'Unauthorized');
    const noFile = await transcribe(gw, key, { model: 'whisper-1' }, null);
    assert.equal(noFile.status, 400, noFile.text);
    assert.match(errorA(noFile.json).message, /file/);
  });
});

describe('POST /v1/audio/transcriptions, asynchronous mode (async=true)', () => {
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

  test('returns a task charged for the audio length; after the runner it has the text and a downloadable transcript', async () => {
    const before = await balanceMicros(gw, { userId });
    const createdAt = gw.clock.now();
    const response = await transcribe(gw, key, { model: 'whisper-1', async: 'true' });
    assert.equal(response.status, 200, response.text);
    const task = asRecord(response.json);
    assert.deepEqual(mediaTaskUrls(task, { model: 'whisper-1', status: 'idle', createdAtMs: createdAt }), []);
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1);
    assert.equal(gw.simulator.lastRequest('/v1/audio/transcriptions'), undefined, 'the vendor is called by the job, not the request');

    await gw.app.services.runner.runDue();
    const done = await getOk(gw, `/media/tasks/${String(task.id)}`, key);
    const urls = mediaTaskUrls(done, { id: String(task.id), model: 'whisper-1', status: 'done' });
    assert.equal(done.text, TEXT);
    assert.equal(urls.length, 1);
    const transcript = await download(gw, urls[0]!);
    assert.match(transcript.contentType, /^text\/plain/);
    assert.equal(transcript.data.toString('utf8'), TEXT);
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_1, 'charged once');
  });

  test('a retired model without analogue is a 410 in shape C (code 15), not charged', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await transcribe(gw, key, { model: 'whisper-0-retired', async: 'true' });
    assert.equal(response.status, 410, response.text);
    const error = errorC(response.json);
    assert.equal(error.code, 15);
    assert.equal(error.original_id, 'whisper-0-retired');
    assert.equal(await balanceMicros(gw, { userId }), before);
    assert.equal(await gw.app.services.runner.runDue(), 0, 'no task was queued');
  });

  test('a retired model with an analogue is redirected: the task is billed as the requested model', async () => {
    const before = await balanceMicros(gw, { userId });
    const response = await transcribe(gw, key, { model: 'whisper-0-legacy', async: 'true' });
    assert.equal(response.status, 200, response.text);
    assert.equal(response.headers.get('deprecation'), 'true');
    assert.equal(response.headers.get('x-model-served'), 'whisper-1');
    assert.equal(await balanceMicros(gw, { userId }), before - WHISPER_LEGACY);
    await gw.app.services.runner.runDue();
    assert.equal(forwardedModel(gw), 'whisper-1');
    const done = await getOk(gw, `/media/tasks/${String(asRecord(response.json).id)}`, key);
    assert.equal(done.status, 'done');
    assert.equal(done.model, 'whisper-0-legacy');
  });

  test('reports the finished task to its webhook, signed with the creating key', async () => {
    const receiver = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock });
    try {
      const response = await transcribe(gw, key, { model: 'whisper-1', async: 'true', webhook_url: receiver.url });
      assert.equal(response.status, 200, response.text);
      const id = String(asRecord(response.json).id);
      await gw.app.services.runner.runDue();
      await receiver.waitFor(1);
      const [delivery] = receiver.received;
      assert.ok(delivery?.verified, 'the signature verifies with the creating API key');
      assert.equal(delivery.headers['x-tollgate-event'], 'task.done');
      assert.equal(delivery.headers['x-tollgate-delivery'], id);
      const body = asRecord(delivery.json);
      mediaTaskUrls(body, { id, status: 'done', model: 'whisper-1' });
      assert.equal(body.text, TEXT);
    } finally {
      await receiver.close();
    }
  });
});
