import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { PIXEL_PNG_BASE64, videoContent, type Simulator } from '../simulator/server.ts';
import { asRecord, isRecord, postRaw } from './helpers/e2e.ts';
import { micros, startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { assertChargedOnce, putPool, requestRows, startChannelSimulator } from './helpers/channels.ts';
import { advanceAndRun, download, getOk, getRaw, mediaTaskUrls, postOk } from './helpers/tasks.ts';

/**
 * docs/api.md, Channels: "A follow-up that must reach the vendor account that made an object goes to the same channel:
 * polls and downloads of a video task, image URLs, and `GET /v1/responses/:id` or `previous_response_id` of a
 * passed-through response."
 *
 * Each provider here has two channels of equal weight, each a vendor endpoint of its own (two simulators: two vendor
 * accounts whose jobs and stored responses the other does not know). Routing is smooth weighted round-robin, so the
 * channels alternate call by call: a follow-up routed like a new call would reach the other account about every other
 * time, be answered 404 (or 400 for an unknown `previous_response_id`) and the user would see a failed task or request.
 * The simulators' own request records show where each follow-up went.
 */

/** How many objects each case makes: odd, so round-robin creation and a round-robin follow-up cannot stay in step. */
const OBJECTS = 11;

/** Video job ids of the second simulator start here (the first's start at video_1), so the two id spaces never meet. */
const B_VIDEO_BASE = 100;

describe('follow-ups go to the channel whose vendor account made the object (two channels, two vendor accounts)', () => {
  let gw: TestGateway;
  let simA: Simulator;
  let simB: Simulator;

  before(async () => {
    simA = await startChannelSimulator();
    simB = await startChannelSimulator();
    // A vendor's ids are unique across its accounts; the simulators number from 1 each. Move B's counters past anything
    // A will hand out (its video ids and its response ids), so an id reaching the wrong account is unknown there (404),
    // not another object that happens to share the number.
    for (let index = 0; index < B_VIDEO_BASE; index++) {
      const created = await fetch(`${simB.url}/v1/videos`, { method: 'POST', headers: { authorization: 'Bearer setup', 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'id filler' }) });
      assert.equal(created.status, 200);
      await created.arrayBuffer();
      const response = await fetch(`${simB.url}/v1/responses`, { method: 'POST', headers: { authorization: 'Bearer setup', 'content-type': 'application/json' }, body: JSON.stringify({ model: 'gpt-4o-mini', input: 'id filler', store: false }) });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    simB.reset(); // forgets the filler jobs and requests; ids keep counting up
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
    await simA?.close();
    await simB?.close();
  });

  test(`video tasks: ${OBJECTS} tasks over both accounts; every poll and download reaches the account that made the job; all done, charged once`, async () => {
    await putProvider(gw, 'pin-video', [{ id: 'a', baseUrl: `${simA.url}/v1` }, { id: 'b', baseUrl: `${simB.url}/v1` }]);
    const put = await gw.admin('PUT', '/models/pin-sora', { kind: 'media', mediaType: 'video', provider: 'pin-video', upstreamModel: 'sora-2', cost_request: '0.40' });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const { key, userId } = await gw.fundedKey({ balance: '20.00' });

    const tasks: Array<{ id: string; prompt: string }> = [];
    for (let index = 0; index < OBJECTS; index++) {
      const prompt = `pinned video ${index}`;
      const created = await postOk(gw, '/api/v2/media/tasks', key, { model: 'pin-sora', prompt });
      tasks.push({ id: String(created.body.id), prompt });
    }
    await gw.app.services.runner.runDue(); // the vendor creates the jobs
    const readAll = async () => Promise.all(tasks.map(async (task) => getOk(gw, `/media/tasks/${task.id}`, key)));
    // The simulator finishes a job after `videoPollsToComplete` (2) status polls; a pass of the runner polls every task once (2 s apart).
    for (let pass = 0; pass < 6 && (await readAll()).some((task) => task.status === 'processing' || task.status === 'idle'); pass++) await advanceAndRun(gw, 2_000);

    const views = await readAll();
    for (const [index, view] of views.entries()) {
      const urls = mediaTaskUrls(view, { id: tasks[index]!.id, status: 'done' });
      assert.equal(urls.length, 1);
      const file = await download(gw, urls[0]!);
      assert.equal(file.contentType, 'video/mp4');
      assert.deepEqual(file.data, videoContent(tasks[index]!.prompt, '4', '720x1280'), `task ${index} holds the video of its own prompt`);
    }

    // At each vendor account: which prompts it was asked to make, under which job ids, and what was asked of each job.
    const prompts: string[] = [];
    for (const [name, sim, base] of [['A', simA, 0], ['B', simB, B_VIDEO_BASE]] as const) {
      const posts = sim.requests.filter((request) => request.method === 'POST' && request.path === '/v1/videos');
      prompts.push(...posts.map((request) => String(asRecord(request.json).prompt)));
      assert.ok(posts.length > 0, `account ${name} made some of the videos (both channels are exercised)`);
      const jobs = new Set(posts.map((_, index) => `video_${base + index + 1}`));
      const gets = sim.requests.filter((request) => request.method === 'GET' && request.path.startsWith('/v1/videos/'));
      for (const request of gets) {
        const job = request.path.split('/')[3]!;
        assert.ok(jobs.has(job), `account ${name} was asked about ${request.path}, a job another account made`);
      }
      for (const job of jobs) {
        assert.equal(gets.filter((request) => request.path === `/v1/videos/${job}`).length, sim.options.videoPollsToComplete, `${job} at ${name}: every status poll there`);
        assert.equal(gets.filter((request) => request.path === `/v1/videos/${job}/content`).length, 1, `${job} at ${name}: its download there`);
      }
    }
    assert.deepEqual(prompts.sort(), tasks.map((task) => task.prompt).sort(), 'each task made exactly one vendor job');

    const charges = await assertChargedOnce(gw, userId, await requestRows(gw, userId));
    assert.deepEqual([...charges.values()], tasks.map(() => micros('0.40')), 'each task charged its price once, nothing refunded');
    await assertNoRefunds(gw, userId);
  });

  test(`Responses API passthrough: ${OBJECTS} stored responses over both accounts; GET /v1/responses/:id and previous_response_id reach the account that made each`, async () => {
    await putPool(gw, 'pin-responses', [{ id: 'a', simulator: simA }, { id: 'b', simulator: simB }], { id: 'pin-gpt' });
    const { key, userId } = await gw.fundedKey({ balance: '20.00' });
    simA.reset();
    simB.reset();

    const made: Array<{ id: string; input: string }> = [];
    for (let index = 0; index < OBJECTS; index++) {
      // Each response is followed up at once, as a client continuing a conversation does: create, read back, continue.
      const input = `first turn ${index}`;
      const first = await postRaw(gw, '/v1/responses', { key, body: { model: 'pin-gpt', input, store: true } });
      assert.equal(first.status, 200, first.text);
      const body = asRecord(first.json);
      const id = String(body.id);
      made.push({ id, input });

      const fetched = await getRaw(gw, `/v1/responses/${id}`, key);
      assert.equal(fetched.status, 200, `GET /v1/responses/${id}: ${fetched.text}`);
      assert.equal(asRecord(fetched.json).id, id);
      assert.deepEqual(asRecord(fetched.json).output, body.output, 'the stored response as the vendor made it');

      const next = await postRaw(gw, '/v1/responses', { key, body: { model: 'pin-gpt', input: `second turn ${index}`, previous_response_id: id } });
      assert.equal(next.status, 200, `previous_response_id ${id}: ${next.text}`);
      assert.equal(asRecord(next.json).previous_response_id, id);
    }
    assert.equal(new Set(made.map((response) => response.id)).size, OBJECTS, 'the vendor ids are distinct');

    for (const { id, input } of made) {
      const [home, other] = simA.requests.some((request) => request.path === '/v1/responses' && isRecord(request.json) && request.json.input === input) ? [simA, simB] : [simB, simA];
      assert.ok(home.requests.some((request) => request.method === 'GET' && request.path === `/v1/responses/${id}`), `GET ${id} reached the account that made it`);
      assert.ok(home.requests.some((request) => request.method === 'POST' && isRecord(request.json) && request.json.previous_response_id === id), `the follow-up on ${id} reached that account`);
      assert.ok(!other.requests.some((request) => request.path === `/v1/responses/${id}` || (isRecord(request.json) && request.json.previous_response_id === id)), `the other account never heard of ${id}`);
    }
    const firstTurns = (sim: Simulator): number => sim.requests.filter((request) => request.method === 'POST' && isRecord(request.json) && String(request.json.input).startsWith('first turn')).length;
    assert.ok(firstTurns(simA) > 0 && firstTurns(simB) > 0, `both accounts made responses (${firstTurns(simA)} and ${firstTurns(simB)})`);

    const rows = (await requestRows(gw, userId)).filter((row) => row.model === 'pin-gpt');
    const charges = await assertChargedOnce(gw, userId, rows);
    assert.equal(charges.size, 2 * OBJECTS, 'each POST /v1/responses charged once (the GETs are free)');
    assert.ok([...charges.values()].every((amount) => amount > 0n));
    await assertNoRefunds(gw, userId);
  });

  test(`image URLs: the download of each image goes through the channel (vendor key) that made it; ${OBJECTS} image tasks all done`, async () => {
    // The simulator's image URLs are absolute and need no key (like OpenAI's signed blob URLs): any channel's download
    // would fetch them, so the pin could not be told apart there. These two stand-in vendors serve an image only to the
    // key of the account that made it, as a vendor with private, key-protected file URLs does.
    const vendorA = await startImageVendor('sk-pin-image-a');
    const vendorB = await startImageVendor('sk-pin-image-b');
    try {
      await putProvider(gw, 'pin-image', [{ id: 'a', baseUrl: `${vendorA.url}/v1` }, { id: 'b', baseUrl: `${vendorB.url}/v1` }]);
      const put = await gw.admin('PUT', '/models/pin-image-model', { kind: 'image', mediaType: 'image', provider: 'pin-image', upstreamModel: 'dall-e-2', cost_request: '0.02' });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const { key, userId } = await gw.fundedKey({ balance: '20.00' });

      const ids: string[] = [];
      for (let index = 0; index < OBJECTS; index++) ids.push(String((await postOk(gw, '/api/v2/media/tasks', key, { model: 'pin-image-model', prompt: `pinned image ${index}` })).body.id));
      await gw.app.services.runner.runDue();
      for (const id of ids) {
        const view = await getOk(gw, `/media/tasks/${id}`, key);
        const urls = mediaTaskUrls(view, { id, status: 'done' });
        assert.equal(urls.length, 1);
        const file = await download(gw, urls[0]!);
        assert.deepEqual([file.contentType, file.data], ['image/png', Buffer.from(PIXEL_PNG_BASE64, 'base64')]);
      }
      for (const vendor of [vendorA, vendorB]) {
        const posts = vendor.requests.filter((request) => request.method === 'POST').length;
        assert.ok(posts > 0, `${vendor.key} made some of the images (both channels are exercised)`);
        assert.deepEqual(vendor.requests.filter((request) => request.method === 'GET').map((request) => request.key), Array(posts).fill(vendor.key), `every file of ${vendor.key} was fetched with its own key`);
      }
      assert.equal(vendorA.requests.filter((request) => request.method === 'POST').length + vendorB.requests.filter((request) => request.method === 'POST').length, OBJECTS);

      const charges = await assertChargedOnce(gw, userId, await requestRows(gw, userId));
      assert.deepEqual([...charges.values()], ids.map(() => micros('0.02')), 'each task charged its price once');
      await assertNoRefunds(gw, userId);
    } finally {
      await vendorA.close();
      await vendorB.close();
    }
  });
});

/** Puts an OpenAI-format provider whose channel `id` has the key `sk-<provider>-<id>`. */
async function putProvider(gateway: TestGateway, provider: string, channels: ReadonlyArray<{ id: string; baseUrl: string }>): Promise<void> {
  const put = await gateway.admin('PUT', `/providers/${provider}`, { type: 'openai', channels: channels.map((channel) => ({ ...channel, apiKey: `sk-${provider}-${channel.id}` })) });
  assert.equal(put.status, 200, JSON.stringify(put.body));
}

async function assertNoRefunds(gateway: TestGateway, userId: string): Promise<void> {
  const refunds = await gateway.storage.db.selectFrom('ledger').select('id').where('account_id', '=', userId).where('kind', '=', 'refund').execute();
  assert.equal(refunds.length, 0, 'nothing refunded: no task failed');
}

interface ImageVendor {
  url: string;
  key: string;
  requests: Array<{ method: string; path: string; key: string }>;
  close(): Promise<void>;
}

/**
 * A vendor account answering POST /v1/images/generations with URLs of files it serves only to its own key (others: 404,
 * the file is not theirs): the image is fetched with the key of the channel that made it, or not at all.
 */
async function startImageVendor(key: string): Promise<ImageVendor> {
  const requests: ImageVendor['requests'] = [];
  let sequence = 0;
  const send = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const bearer = (request: IncomingMessage): string => String(request.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = (request.url ?? '/').split('?')[0]!;
      requests.push({ method: request.method ?? 'GET', path, key: bearer(request) });
      if (bearer(request) !== key) return send(response, request.method === 'GET' ? 404 : 401, { error: { message: 'not found for this account', type: 'invalid_request_error' } });
      if (request.method === 'POST' && path === '/v1/images/generations') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { n?: number };
        sequence += 1;
        return send(response, 200, { created: 0, data: Array.from({ length: body.n ?? 1 }, (_, index) => ({ url: `${vendor.url}/files/img-${sequence}-${index}.png` })) });
      }
      if (request.method === 'GET' && path.startsWith('/files/')) {
        response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from(PIXEL_PNG_BASE64, 'base64'));
        return;
      }
      send(response, 404, { error: { message: `unknown ${path}`, type: 'invalid_request_error' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const vendor: ImageVendor = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    key,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
  return vendor;
}
