import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { countTokens, replyText, startSimulator, type RecordedRequest, type Simulator } from './server.ts';

let simulator: Simulator;

before(async () => {
  simulator = await startSimulator({ recordLimit: 3 });
});
after(() => simulator.close());

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${simulator.url}${path}`, {
    method,
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: await response.json() };
}

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('control endpoints', () => {
  it('records requests in a ring buffer and lists, clears and resets them', async () => {
    for (let index = 0; index < 4; index += 1) await call('POST', '/v1/chat/completions', { ...chat, user: `u${index}` });
    assert.equal(simulator.requests.length, 3);
    assert.deepEqual(simulator.requests.map((request) => (request.json as { user: string }).user), ['u1', 'u2', 'u3']);
    const listed = await call('GET', '/_sim/requests');
    const recorded = listed.json as RecordedRequest[];
    assert.equal(recorded.length, 3);
    assert.equal(recorded[2]?.path, '/v1/chat/completions');
    assert.equal(recorded[2]?.method, 'POST');
    assert.equal(typeof recorded[2]?.at, 'number');
    assert.equal(JSON.parse(recorded[2]?.body ?? '').user, 'u3');
    assert.equal(simulator.lastRequest('/v1/embeddings'), undefined);
    await call('DELETE', '/_sim/requests');
    assert.equal(simulator.requests.length, 0);
  });

  it('changes options and adds faults over HTTP', async () => {
    const config = await call('POST', '/_sim/config', { replyTokens: 4 });
    assert.equal((config.json as { replyTokens: number }).replyTokens, 4);
    const short = await call('POST', '/v1/chat/completions', chat);
    assert.equal((short.json as { usage: { completion_tokens: number } }).usage.completion_tokens, countTokens(replyText('hi', 4)));
    assert.equal(countTokens(replyText('hi', 4)), 6); // the opening sentence is never cut by replyTokens
    assert.equal((await call('POST', '/_sim/config', { latencyMs: -1 })).status, 400);
    simulator.options.replyTokens = 16;

    assert.equal((await call('POST', '/_sim/faults', { status: 503, times: 'Infinity', match: { model: 'gpt-4o' } })).status, 200);
    for (let index = 0; index < 3; index += 1) assert.equal((await call('POST', '/v1/chat/completions', chat)).status, 503);
    assert.equal((await call('POST', '/v1/chat/completions', { ...chat, model: 'gpt-4.1' })).status, 200);
    await call('POST', '/_sim/reset');
    assert.equal((await call('POST', '/v1/chat/completions', chat)).status, 200);
    assert.equal((await call('POST', '/_sim/faults', { status: 'x' })).status, 400);
  });

  it('answers unknown vendor paths like the vendor', async () => {
    const unknown = await call('POST', '/v1/unknown', {});
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.json, { error: { message: 'Invalid URL (POST /v1/unknown)', type: 'invalid_request_error', param: null, code: null } });
  });
});

describe('main.ts', () => {
  it('starts from the environment, prints its URL and exits on SIGTERM', async () => {
    const main = fileURLToPath(new URL('./main.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', main], {
      env: { ...process.env, SIM_PORT: '0', SIM_STREAM_CHUNKS: '2' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8');
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: string) => {
        output += chunk;
        const match = /simulator listening on (http:\/\/\S+)/.exec(output);
        if (match?.[1] !== undefined) resolve(match[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited early with ${code}`)));
    });
    const health = await fetch(`${url}/_sim/health`);
    assert.deepEqual(await health.json(), { ok: true });
    const options = await fetch(`${url}/_sim/config`, { method: 'POST', body: '{}' });
    assert.equal(((await options.json()) as { streamChunks: number }).streamChunks, 2);
    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
  });
});
