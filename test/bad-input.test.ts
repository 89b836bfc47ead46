import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

/** Every POST endpoint, with the key header it takes. */
const ENDPOINTS = [
  '/v1/chat/completions',
  '/v1/embeddings',
  '/v1/moderations',
  '/v1/messages',
  '/v1/messages/count_tokens',
  '/v1/imagegen/imagine',
  '/v1/imagegen/action',
  '/v1/media/create',
  '/api/v2/media/tasks',
  '/api/v2/media/price',
  '/v1/media/generate',
  '/v1/audio/transcriptions',
  '/v1/assistant/create',
  '/v1/assistant/update',
  '/v1/assistant/chat',
  '/v1/assistant/like',
  '/v1/assistant/install',
  '/v1/database/create',
  '/v1/database/add',
  '/v1/database/delete',
];

const BODIES: Array<[string, string]> = [
  ['not JSON', '{"model": '],
  ['a JSON array', '[1, 2, 3]'],
  ['JSON null', 'null'],
  ['a JSON string', '"hello"'],
  ['an empty object', '{}'],
  ['wrong types everywhere', JSON.stringify({ model: 42, messages: 'x', input: { a: 1 }, prompt: [], chatId: 7, id: false, title: null, max_tokens: 'many', stream: 'yes' })],
  ['JSON nested 10,000 deep', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":${'['.repeat(10_000)}${']'.repeat(10_000)}}`],
  ['deeply nested junk', JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: [{ type: 'text' }, null, 5] }] })],
];

/** Endpoints that take a `model`, with an otherwise valid body naming one that does not exist. */
const UNKNOWN_MODEL: Array<[string, unknown]> = [
  ['/v1/chat/completions', { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }],
  ['/v1/embeddings', { model: 'no-such-model', input: 'x' }],
  ['/v1/messages', { model: 'no-such-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }],
  ['/v1/messages/count_tokens', { model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }],
  ['/v1/media/create', { model: 'no-such-model', prompt: 'x' }],
  ['/api/v2/media/tasks', { model: 'no-such-model', prompt: 'x' }],
  ['/api/v2/media/price', { model: 'no-such-model' }],
  ['/v1/assistant/create', { title: 'x', modelId: 'no-such-model' }],
];

/** Bad input never gets a 5xx and never costs money, on any endpoint. */
describe('malformed requests', () => {
  let gw: TestGateway;
  let key: string;
  let userId: string;

  before(async () => {
    gw = await startTestGateway();
    ({ key, userId } = await gw.fundedKey({ balance: '3.00' }));
  });
  after(async () => {
    await gw?.close();
  });

  for (const path of ENDPOINTS) {
    test(`${path}: a clear 4xx for every malformed body`, async () => {
      for (const [label, body] of BODIES) {
        const response = await fetch(`${gw.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        assert.ok(response.status >= 400 && response.status < 500, `${path} with ${label}: ${response.status} ${text}`);
        assert.doesNotThrow(() => JSON.parse(text), `${path} with ${label}: the error body is JSON`);
        assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
      }
    });
  }

  test('an unknown model is a 4xx everywhere a model is named', async () => {
    for (const [path, body] of UNKNOWN_MODEL) {
      const response = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.ok([400, 404].includes(response.status), `${path}: ${response.status} ${await response.text()}`);
    }
  });

  test('JSON nested 10,000 deep is a 400 in the endpoint\'s own shape', async () => {
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const cases: Array<[string, string, 'A' | 'B']> = [
      ['/v1/messages', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":${deep}}`, 'B'],
      ['/v1/messages/count_tokens', `{"model":"claude-sonnet-4-5","messages":${deep}}`, 'B'],
      ['/v1/messages', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[{"role":"user","content":"x"}],"tools":[{"name":"t","input_schema":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}]}`, 'B'],
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":${deep}}`, 'A'],
      ['/v1/embeddings', `{"model":"text-embedding-3-small","input":${deep}}`, 'A'],
    ];
    for (const [path, body, shape] of cases) {
      const response = await fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' },
        body,
      });
      const answer = (await response.json()) as { type?: string; error: { type: string; message: string } };
      assert.equal(response.status, 400, `${path}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.type, 'invalid_request_error');
      assert.equal(answer.type, shape === 'B' ? 'error' : undefined, `${path} answers in shape ${shape}`);
    }
  });

  test('a body naming __proto__ or constructor is refused before it is parsed, however it is spelled; nothing is charged', async () => {
    const balance = async (): Promise<string> => ((await gw.admin('GET', `/admin/v1/users/${userId}`)).body as { balance: string }).balance;
    const before = await balance();
    const message = '{"role":"user","content":"x"}';
    const cases: Array<[string, string, string]> = [
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[${message}],"__proto__":{"admin":true}}`, 'a top-level __proto__'],
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"x","constructor":{"prototype":{"a":1}}}]}`, 'a nested constructor'],
      ['/v1/chat/completions', `{"model":"gpt-4o-mini","messages":[${message}],"stream_options":{"\\u005f_proto__":{"admin":true}}}`, 'a __proto__ spelled with an escape'],
      ['/v1/messages', `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[${message}],"\\u0063onstructor":{}}`, 'a constructor spelled with an escape'],
    ];
    for (const [path, body, label] of cases) {
      const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key, 'content-type': 'application/json' }, body });
      const answer = (await response.json()) as { error: { type: string } };
      assert.equal(response.status, 400, `${label}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.type, 'invalid_request_error', label);
      assert.equal(response.headers.get('x-tollgate-cost'), null, `${label}: not charged`);
    }
    assert.equal(await balance(), before, 'no refused body moved the balance');
    // Escapes that spell no such key leave the body as it is: the call is served and charged (to another user: this suite
    // ends by checking that nothing cost its own user anything).
    const other = await gw.fundedKey({ balance: '1.00' });
    const escaped = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.key}`, 'content-type': 'application/json' },
      body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"caf\\u00e9 \\u2014 constructors and prototypes"}]}',
    });
    assert.equal(escaped.status, 200, await escaped.text());
    assert.ok(Number(escaped.headers.get('x-tollgate-cost')) > 0, 'the served call was charged');
  });

  test('a malformed multipart body on /v1/audio/transcriptions is a 400 in shape A', async () => {
    const part = (name: string, value: string, extra = '') => `--XX\r\nContent-Disposition: form-data; name="${name}"${extra}\r\n\r\n${value}\r\n`;
    const bodies: Array<[string, string, string]> = [
      ['no boundary', 'multipart/form-data', part('model', 'whisper-1')],
      ['a part cut off mid-file', 'multipart/form-data; boundary=XX', `${part('model', 'whisper-1')}--XX\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\n\r\nabc`],
      ['a truncated closing boundary', 'multipart/form-data; boundary=XX', `${part('model', 'whisper-1')}${part('file', 'abc', '; filename="a.mp3"')}--X`],
      ['a boundary that never appears', 'multipart/form-data; boundary=YY', part('model', 'whisper-1')],
    ];
    for (const [label, contentType, body] of bodies) {
      const response = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, body });
      const answer = (await response.json()) as { type?: string; error: { type: string } };
      assert.equal(response.status, 400, `${label}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.type, 'invalid_request_error', label);
      assert.equal(answer.type, undefined, `${label}: shape A`);
    }
    const wrongType = await fetch(`${gw.url}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: 'x' });
    assert.equal(wrongType.status, 415);
  });

  test('a form body on a JSON endpoint is a 415 in its own error shape', async () => {
    const form = new FormData();
    form.set('model', 'gpt-4o-mini');
    form.set('messages', 'hello');
    for (const [path, shape] of [['/v1/chat/completions', 'A'], ['/v1/messages', 'B'], ['/v1/embeddings', 'A']] as const) {
      const response = await fetch(`${gw.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'x-api-key': key }, body: form });
      const answer = (await response.json()) as { type?: string; error: { type: string; message: string } };
      assert.equal(response.status, 415, `${path}: ${JSON.stringify(answer)}`);
      assert.equal(answer.error.type, 'invalid_request_error', path);
      assert.match(answer.error.message, /content-type: must be application\/json/, path);
      assert.equal(answer.type, shape === 'B' ? 'error' : undefined, `${path} answers in shape ${shape}`);
    }
  });

  test('none of it cost anything', async () => {
    assert.equal(await gw.balance({ userId }), '3.00');
  });
});
