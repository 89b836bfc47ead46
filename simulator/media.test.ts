import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  countTokens,
  deterministicBytes,
  PIXEL_PNG_BASE64,
  SPEECH_CONTENT_TYPES,
  SPEECH_MAGIC,
  speechAudio,
  speechPcm,
  startSimulator,
  VIDEO_FAILURE_MESSAGE,
  videoContent,
  videoPhase,
  type Simulator,
} from './server.ts';

let simulator: Simulator;
let client: OpenAI;

before(async () => {
  simulator = await startSimulator();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: `${simulator.url}/v1`, maxRetries: 0 });
});
after(() => simulator.close());
beforeEach(() => {
  simulator.reset();
  simulator.options.videoPollsToComplete = 2;
});

async function call(method: string, path: string, body?: unknown, auth = true): Promise<Response> {
  return fetch(`${simulator.url}${path}`, {
    method,
    headers: { ...(auth ? { authorization: 'Bearer k' } : {}), 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function errorOf(response: Response): Promise<{ message: string; type: string; param: string | null; code: string | null }> {
  const body = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  return body.error;
}

describe('audio speech', () => {
  it('returns deterministic audio bytes with the format content type', async () => {
    const response = await client.audio.speech.create({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hello there, world.' });
    assert.equal(response.headers.get('content-type'), 'audio/mpeg');
    const bytes = Buffer.from(await response.arrayBuffer());
    assert.deepEqual(bytes, speechAudio('Hello there, world.', 'alloy'));
    assert.deepEqual(bytes.subarray(0, 3), Buffer.from('ID3'));
    assert.equal(bytes.length, SPEECH_MAGIC.mp3.length + 64 * countTokens('Hello there, world.'));
    const again = Buffer.from(await (await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there, world.' })).arrayBuffer());
    assert.deepEqual(again, bytes);
    const other = Buffer.from(await (await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello there, moon.' })).arrayBuffer());
    assert.notDeepEqual(other, bytes);
  });

  it('writes a valid WAV file and raw PCM', async () => {
    const input = 'A short sentence to speak.';
    const wav = await client.audio.speech.create({ model: 'tts-1', voice: 'nova', input, response_format: 'wav', speed: 1.5 });
    assert.equal(wav.headers.get('content-type'), 'audio/wav');
    const bytes = Buffer.from(await wav.arrayBuffer());
    const pcm = speechPcm(input, 'nova');
    assert.equal(bytes.toString('ascii', 0, 4), 'RIFF');
    assert.equal(bytes.toString('ascii', 8, 12), 'WAVE');
    assert.equal(bytes.readUInt32LE(4), bytes.length - 8);
    assert.equal(bytes.readUInt16LE(20), 1);
    assert.equal(bytes.readUInt32LE(24), 24_000);
    assert.equal(bytes.readUInt16LE(34), 16);
    assert.equal(bytes.readUInt32LE(40), pcm.length);
    assert.deepEqual(bytes.subarray(44), pcm);
    const raw = await call('POST', '/v1/audio/speech', { model: 'tts-1', voice: { id: 'voice_custom' }, input, response_format: 'pcm' });
    assert.equal(raw.headers.get('content-type'), 'audio/pcm');
    assert.deepEqual(Buffer.from(await raw.arrayBuffer()), speechPcm(input, 'voice_custom'));
    for (const format of ['opus', 'aac', 'flac'] as const) {
      const response = await call('POST', '/v1/audio/speech', { model: 'tts-1', voice: 'echo', input, response_format: format });
      assert.equal(response.headers.get('content-type'), SPEECH_CONTENT_TYPES[format]);
      assert.deepEqual(Buffer.from(await response.arrayBuffer()), Buffer.concat([SPEECH_MAGIC[format], speechPcm(input, 'echo')]));
    }
  });

  it('rejects bad requests like the vendor', async () => {
    const cases: [unknown, string, number][] = [
      [{ model: 'tts-1', voice: 'alloy' }, 'input', 400],
      [{ model: 'tts-1', input: 'hi' }, 'voice', 400],
      [{ voice: 'alloy', input: 'hi' }, 'model', 400],
      [{ model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4097) }, 'input', 400],
      [{ model: 'tts-1', voice: 'alloy', input: 'hi', response_format: 'ogg' }, 'response_format', 400],
      [{ model: 'tts-1', voice: 'alloy', input: 'hi', speed: 5 }, 'speed', 400],
    ];
    for (const [body, param, status] of cases) {
      const response = await call('POST', '/v1/audio/speech', body);
      assert.equal(response.status, status, param);
      const error = await errorOf(response);
      assert.equal(error.param, param);
      assert.equal(error.type, 'invalid_request_error');
    }
    assert.equal((await call('POST', '/v1/audio/speech', { model: 'tts-1', voice: 'alloy', input: 'x'.repeat(4096), response_format: 'pcm' })).status, 200);
    await assert.rejects(client.audio.speech.create({ model: 'missing-tts', voice: 'alloy', input: 'hi' }), OpenAI.NotFoundError);
    assert.equal((await call('POST', '/v1/audio/speech', { model: 'tts-1', voice: 'alloy', input: 'hi' }, false)).status, 401);
    const bad = await fetch(`${simulator.url}/v1/audio/speech`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: '{' });
    assert.equal(bad.status, 400);
  });
});

describe('videos', () => {
  it('creates a video with the SDK (multipart) and polls it to completion', async () => {
    const created = await client.videos.create({ model: 'sora-2', prompt: 'A cat on a skateboard', seconds: '8', size: '1280x720' });
    assert.match(created.id, /^video_\d+$/);
    assert.equal(created.object, 'video');
    assert.equal(created.status, 'queued');
    assert.equal(created.progress, 0);
    assert.equal(created.seconds, '8');
    assert.equal(created.size, '1280x720');
    assert.equal(created.model, 'sora-2');
    assert.equal(created.completed_at, null);
    assert.equal(created.error, null);
    assert.equal(typeof created.created_at, 'number');
    assert.equal(simulator.lastRequest('/v1/videos')?.headers['content-type']?.startsWith('multipart/form-data'), true);

    await assert.rejects(client.videos.downloadContent(created.id), (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.match(error.message, /not ready/);
      return true;
    });
    const first = await client.videos.retrieve(created.id);
    assert.equal(first.status, 'in_progress');
    assert.equal(first.progress, 50);
    const second = await client.videos.retrieve(created.id);
    assert.equal(second.status, 'completed');
    assert.equal(second.progress, 100);
    assert.equal(typeof second.completed_at, 'number');
    assert.equal(second.expires_at, (second.completed_at ?? 0) + 86_400);
    const third = await client.videos.retrieve(created.id);
    assert.deepEqual(third, second);

    const content = await client.videos.downloadContent(created.id);
    assert.equal(content.headers.get('content-type'), 'video/mp4');
    const bytes = Buffer.from(await content.arrayBuffer());
    assert.deepEqual(bytes, videoContent('A cat on a skateboard', '8', '1280x720'));
    assert.equal(bytes.toString('ascii', 4, 8), 'ftyp');
    assert.equal(bytes.toString('ascii', 28, 32), 'mdat');
    assert.deepEqual(bytes.subarray(32), deterministicBytes('video\nA cat on a skateboard\n8\n1280x720', 256 * 8));
    const thumbnail = await client.videos.downloadContent(created.id, { variant: 'thumbnail' });
    assert.equal(thumbnail.headers.get('content-type'), 'image/webp');
    assert.deepEqual(Buffer.from(await thumbnail.arrayBuffer()), videoContent('A cat on a skateboard', '8', '1280x720', 'thumbnail'));
  });

  it('accepts JSON, applies defaults and follows videoPollsToComplete', async () => {
    const config = await call('POST', '/_sim/config', { videoPollsToComplete: 4 });
    assert.equal(((await config.json()) as { videoPollsToComplete: number }).videoPollsToComplete, 4);
    const created = (await (await call('POST', '/v1/videos', { prompt: 'waves' })).json()) as { id: string; model: string; seconds: string; size: string };
    assert.deepEqual([created.model, created.seconds, created.size], ['sora-2', '4', '720x1280']);
    const progress: [string, number][] = [];
    for (let poll = 0; poll < 5; poll += 1) {
      const video = (await (await call('GET', `/v1/videos/${created.id}`)).json()) as { status: string; progress: number };
      progress.push([video.status, video.progress]);
    }
    assert.deepEqual(progress, [['in_progress', 25], ['in_progress', 50], ['in_progress', 75], ['completed', 100], ['completed', 100]]);
    assert.deepEqual(videoPhase(3, 4, 'waves'), { status: 'in_progress', progress: 75 });

    simulator.options.videoPollsToComplete = 0;
    const instant = await client.videos.create({ prompt: 'instant' });
    assert.equal(instant.status, 'completed');
    assert.equal((await client.videos.downloadContent(instant.id)).status, 200);

    const list = await call('GET', '/v1/videos?order=asc&limit=1');
    const page = (await list.json()) as { object: string; data: { id: string }[]; has_more: boolean };
    assert.equal(page.object, 'list');
    assert.deepEqual(page.data.map((video) => video.id), [created.id]);
    assert.equal(page.has_more, true);
    const deleted = await client.videos.delete(created.id);
    assert.deepEqual(deleted, { id: created.id, object: 'video.deleted', deleted: true });
    assert.equal((await call('GET', `/v1/videos/${created.id}`)).status, 404);
  });

  it('fails SIM_FAIL prompts and 404s unknown ids', async () => {
    const created = await client.videos.create({ model: 'sora-2-pro', prompt: 'please SIM_FAIL this' });
    assert.equal((await client.videos.retrieve(created.id)).status, 'in_progress');
    const failed = await client.videos.retrieve(created.id);
    assert.equal(failed.status, 'failed');
    assert.deepEqual(failed.error, { code: 'video_generation_failed', message: VIDEO_FAILURE_MESSAGE });
    assert.equal(failed.completed_at, null);
    assert.equal((await call('GET', `/v1/videos/${created.id}/content`)).status, 404);

    await assert.rejects(client.videos.retrieve('video_nope'), OpenAI.NotFoundError);
    const unknown = await call('GET', '/v1/videos/video_nope/content');
    assert.equal(unknown.status, 404);
    assert.equal((await errorOf(unknown)).type, 'invalid_request_error');
    const missing = await call('POST', '/v1/videos', { model: 'sora-2' });
    assert.equal(missing.status, 400);
    assert.equal((await errorOf(missing)).param, 'prompt');
    const seconds = await call('POST', '/v1/videos', { prompt: 'x', seconds: '5' });
    assert.equal((await errorOf(seconds)).param, 'seconds');
    await assert.rejects(client.videos.create({ model: 'missing-sora', prompt: 'x' }), OpenAI.NotFoundError);
    assert.equal((await call('GET', '/v1/videos/video_1', undefined, false)).status, 401);
  });

  it('takes injected faults by path prefix and by multipart model; a faulted poll does not count', async () => {
    const created = await client.videos.create({ prompt: 'faulty' });
    simulator.addFault({ status: 503, match: { path: '/v1/videos' } });
    await assert.rejects(client.videos.retrieve(created.id), OpenAI.InternalServerError);
    assert.equal((await client.videos.retrieve(created.id)).status, 'in_progress');
    simulator.addFault({ status: 429, match: { model: 'sora-2-pro' }, headers: { 'retry-after': '1' } });
    await assert.rejects(client.videos.create({ model: 'sora-2-pro', prompt: 'x' }), OpenAI.RateLimitError);
    simulator.addFault({ status: 500, match: { path: '/v1/audio/speech' } });
    await assert.rejects(client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'hi' }), OpenAI.InternalServerError);
    simulator.addFault({ status: 400, match: { path: '/v1/images' } });
    await assert.rejects(client.images.generate({ prompt: 'x' }), OpenAI.BadRequestError);
    simulator.options.latencyMs = 30;
    const started = Date.now();
    await client.videos.retrieve(created.id);
    assert.ok(Date.now() - started >= 25);
    simulator.options.latencyMs = 0;
  });
});

describe('images', () => {
  it('returns urls served by the simulator, or b64_json', async () => {
    const png = Buffer.from(PIXEL_PNG_BASE64, 'base64');
    const urls = await client.images.generate({ model: 'dall-e-2', prompt: 'a fox', n: 3 });
    assert.equal(urls.data?.length, 3);
    assert.equal(urls.usage, undefined);
    for (const image of urls.data ?? []) {
      assert.match(image.url ?? '', new RegExp(`^${simulator.url}/_sim/files/img-\\d+-\\d+\\.png$`));
      const file = await fetch(image.url ?? '');
      assert.equal(file.status, 200);
      assert.equal(file.headers.get('content-type'), 'image/png');
      assert.deepEqual(Buffer.from(await file.arrayBuffer()), png);
    }
    assert.equal((await fetch(`${simulator.url}/_sim/files/other.png`)).status, 404);
    const b64 = await client.images.generate({ model: 'dall-e-2', prompt: 'a fox', n: 4, response_format: 'b64_json' });
    assert.deepEqual(b64.data?.map((image) => image.b64_json), Array(4).fill(PIXEL_PNG_BASE64));
    const bad = await call('POST', '/v1/images/generations', { prompt: 'x', response_format: 'gif' });
    assert.equal((await errorOf(bad)).param, 'response_format');
    assert.equal((await call('POST', '/v1/images/generations', { model: 'dall-e-3', prompt: 'x', n: 2 })).status, 400);
  });

  it('always answers gpt-image models with b64_json and usage', async () => {
    const image = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red barn', n: 2, response_format: 'url', quality: 'high', size: '1536x1024' });
    assert.deepEqual(image.data?.map((item) => [item.b64_json, item.url]), [[PIXEL_PNG_BASE64, undefined], [PIXEL_PNG_BASE64, undefined]]);
    const input = countTokens('a red barn');
    assert.deepEqual(image.usage, { input_tokens: input, output_tokens: 2112, total_tokens: input + 2112, input_tokens_details: { text_tokens: input, image_tokens: 0 } });
    assert.deepEqual([image.background, image.output_format, image.quality, image.size], ['opaque', 'png', 'high', '1536x1024']);
  });
});
