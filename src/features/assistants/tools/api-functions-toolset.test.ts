import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { silentLogger, testAssistant, testToolContext } from '../../../../test/helpers/assistant-fixture.ts';
import { json, startFunctionServer, type TestFunctionServer } from '../../../../test/helpers/function-server.ts';
import type { ApiFunction } from '../assistant.ts';
import { ApiFunctionsToolsetFactory, MAX_RESPONSE_BYTES, withQuery, type ApiFunctionsOptions } from './api-functions-toolset.ts';
import type { Toolset } from './toolset.ts';

let server: TestFunctionServer;
let other: TestFunctionServer;

before(async () => {
  other = await startFunctionServer((_request, response) => json(response, 200, { reached: true }));
  server = await startFunctionServer((request, response) => {
    const path = request.url.split('?')[0];
    if (path === '/weather') return json(response, 200, { city: 'Oslo', temperature: 7, echo: request.body || request.url });
    if (path === '/broken') return json(response, 503, { error: 'maintenance' });
    if (path === '/redirect') return void response.writeHead(302, { location: `${other.url}/stolen` }).end('moved');
    if (path === '/huge') {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      let sent = 0;
      const push = (): void => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', push);
        }
        response.end();
      };
      return push();
    }
    if (path === '/image') return void response.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
    if (path === '/slow') return; // never answers
    json(response, 404, { error: 'not found' });
  });
});
after(async () => {
  await server.close();
  await other.close();
});

const fn = (fields: Partial<ApiFunction>): ApiFunction => ({
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  url: `${server.url}/weather`,
  method: 'POST',
  ...fields,
});

async function open(functions: ApiFunction[], options: Partial<ApiFunctionsOptions> = {}, sqlStore = false): Promise<Toolset | undefined> {
  return new ApiFunctionsToolsetFactory({ allowPrivateUrls: true, logger: silentLogger, ...options }).open(testAssistant({ apiFunctions: functions, sqlStore }));
}

async function callOne(function_: ApiFunction, args: Record<string, unknown>, options: Partial<ApiFunctionsOptions> = {}): Promise<string> {
  const toolset = await open([function_], options);
  assert.ok(toolset);
  return toolset.call(function_.name, args, testToolContext());
}

test('each function is a tool with its name, description and parameters; taken names are not offered twice', async () => {
  assert.equal(await open([]), undefined);
  const functions = [fn({}), fn({ description: 'duplicate' }), fn({ name: 'sql_query' }), fn({ name: 'search_knowledge_base' }), fn({ name: 'lookup', parameters: {} })];
  const toolset = await new ApiFunctionsToolsetFactory({ allowPrivateUrls: true, logger: silentLogger }).open(
    testAssistant({ apiFunctions: functions, sqlStore: true, database: { id: 'kb_1', requestFrequency: 'auto', chunks: 3 } }),
  );
  assert.deepEqual(toolset?.definitions, [
    { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
    { name: 'lookup', description: 'Weather of a city', parameters: { type: 'object', properties: {} } },
  ]);
});

test('POST sends the arguments as a JSON body with the configured headers; the model reads status and body', async () => {
  const from = server.requests.length;
  const result = await callOne(fn({ headers: { 'X-Api-Key': 'secret-1', Host: 'evil.example' } }), { city: 'Oslo' });
  assert.equal(result, `HTTP 200\n{"city":"Oslo","temperature":7,"echo":"{\\"city\\":\\"Oslo\\"}"}`);
  const received = server.requests[from];
  assert.equal(received?.method, 'POST');
  assert.equal(received?.headers['x-api-key'], 'secret-1');
  assert.equal(received?.headers['content-type'], 'application/json');
  assert.notEqual(received?.headers.host, 'evil.example');
});

test('GET and DELETE send the arguments as query parameters', async () => {
  const from = server.requests.length;
  await callOne(fn({ method: 'GET', url: `${server.url}/weather?units=metric` }), { city: 'Oslo', days: 3, tags: ['a', 'b'], filter: { max: 1 }, none: null });
  await callOne(fn({ method: 'DELETE' }), { city: 'Bergen' });
  assert.equal(server.requests[from]?.url, '/weather?units=metric&city=Oslo&days=3&tags=a&tags=b&filter=%7B%22max%22%3A1%7D');
  assert.equal(server.requests[from]?.body, '');
  assert.equal(server.requests[from + 1]?.method, 'DELETE');
  assert.equal(server.requests[from + 1]?.url, '/weather?city=Bergen');
  assert.equal(withQuery('https://example.com/a?x=1', { y: true }), 'https://example.com/a?x=1&y=true');
});

test('error statuses reach the model as they are', async () => {
  assert.equal(await callOne(fn({ url: `${server.url}/broken` }), {}), 'HTTP 503\n{"error":"maintenance"}');
});

test('redirects are not followed', async () => {
  const from = other.requests.length;
  assert.equal(await callOne(fn({ url: `${server.url}/redirect` }), {}), `HTTP 302\n[redirect to ${other.url}/stolen not followed]\nmoved`);
  assert.equal(other.requests.length, from, 'the redirect target got no request');
});

test('the response is read up to the size limit, then the model gets a cut, capped text', async () => {
  const result = await callOne(fn({ url: `${server.url}/huge` }), {});
  assert.ok(result.startsWith('HTTP 200\nxxxx'));
  assert.match(result, /\[truncated: the result had 262153 characters, the first 20000 are shown\]/);
  assert.ok(result.endsWith(`[response cut at ${MAX_RESPONSE_BYTES} bytes]`));
  const small = await callOne(fn({ url: `${server.url}/huge` }), {}, { maxResponseBytes: 100 });
  assert.equal(small, `HTTP 200\n${'x'.repeat(100)}\n[response cut at 100 bytes]`);
});

test('binary bodies are summarized', async () => {
  assert.equal(await callOne(fn({ url: `${server.url}/image` }), {}), 'HTTP 200\n[binary body: image/png, 4 bytes]');
});

test('a function that does not answer in time is an error text', async () => {
  const started = Date.now();
  assert.equal(await callOne(fn({ url: `${server.url}/slow` }), {}, { timeoutMs: 300 }), 'Error: the function get_weather did not answer within 0.3 s.');
  assert.ok(Date.now() - started < 2_000);
});

test('unreachable functions are error texts', async () => {
  assert.match(await callOne(fn({ url: 'http://127.0.0.1:9/none' }), {}), /^Error: the function get_weather could not be called: /);
  assert.match(await callOne(fn({ url: 'ftp://example.com/x' }), {}), /^Error: the function get_weather was not called: its URL must be an http or https URL\.$/);
});

test('private URLs are refused unless allowed, and the server gets no request', async () => {
  const from = server.requests.length;
  const result = await callOne(fn({}), { city: 'Oslo' }, { allowPrivateUrls: false });
  assert.equal(result, 'Error: the function get_weather was not called: its URL must not point to a private or loopback address.');
  assert.equal(server.requests.length, from);
});
