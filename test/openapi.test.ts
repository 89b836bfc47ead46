import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { validate } from '@scalar/openapi-parser';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { WEB_APP_PATHS } from '../src/http/routes/web.ts';
import { jsonClient } from './helpers/json-client.ts';
import { createCustomer, managementKey } from './helpers/management.ts';
import { modelEntry } from '../src/http/routes/models.ts';
import { deletedResponse } from '../src/http/route-doc.ts';

type Json = Record<string, any>;

const CHROMIUM = '/usr/bin/chromium';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The routes the router holds, read from Fastify's own listing (not from the OpenAPI registry): `METHOD /path`. */
function routerRoutes(printed: string): Set<string> {
  const routes = new Set<string>();
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^([│ ]*)[└├]── (.+?)(?: \(([^)]*)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const path = (depth === 0 ? '' : stack[depth - 1]!) + match[2]!;
    stack[depth] = path;
    stack.length = depth + 1;
    for (const method of (match[3] ?? '').split(',').map((text) => text.trim()).filter(Boolean)) routes.add(`${method} ${path}`);
  }
  return routes;
}

const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

describe('GET /openapi.json', () => {
  let gateway: TestGateway;
  let document: Json;

  before(async () => {
    gateway = await startTestGateway();
    const response = await fetch(`${gateway.url}/openapi.json`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    document = (await response.json()) as Json;
  });
  after(() => gateway.close());

  test('is a valid OpenAPI 3.1 document', async () => {
    assert.match(document.openapi, /^3\.1\./);
    const result = await validate(document);
    assert.deepEqual(result.errors ?? [], []);
    assert.equal(result.valid, true);
  });

  test('every route of the app is an operation with a summary, a tag and a unique operationId', () => {
    const isWebPath = (path: string): boolean =>
      path === '/*' || path.startsWith('/assets') || path.startsWith('/console') || WEB_APP_PATHS.some((page) => path === page || (page.endsWith('/*') && path.startsWith(page.slice(0, -1))));
    const routes = routerRoutes(gateway.app.server.printRoutes({ commonPrefix: false }));
    assert.ok(routes.size > 100, `the router listing was read (${routes.size} routes)`);
    const expected = [...routes].filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      // The document itself and the reference's pages and files (`/docs`, `/docs/*`, which the router lists as `/docs*`).
      if (path === '/openapi.json' || /^\/docs(?:$|\/|\*)/.test(path)) return false;
      // The web console's pages and files are no API (their routes declare themselves hidden).
      if (method === 'GET' && isWebPath(path)) return false;
      return !(method === 'HEAD' && routes.has(`GET ${path}`));
    });
    const missing: string[] = [];
    const ids = new Set<string>();
    for (const route of expected) {
      const [method, path] = route.split(' ') as [string, string];
      const operation = document.paths[openApiPath(path)]?.[method.toLowerCase()];
      if (!operation) {
        missing.push(route);
        continue;
      }
      assert.ok(typeof operation.summary === 'string' && operation.summary.length > 0, `${route}: summary`);
      assert.ok(!operation.summary.endsWith('(undocumented)'), `${route}: declares itself (config.doc)`);
      assert.equal(operation.tags?.length, 1, `${route}: one tag`);
      assert.ok(!ids.has(operation.operationId), `${route}: operationId ${operation.operationId} is unique`);
      ids.add(operation.operationId);
    }
    assert.deepEqual(missing, [], 'routes without an operation');
    assert.deepEqual(gateway.app.openApi.undeclared(), [], 'routes without a declaration (add `doc` to their config)');
    const documented = Object.values(document.paths).reduce((count: number, item: any) => count + Object.keys(item).filter((key) => METHODS.includes(key)).length, 0);
    assert.equal(documented, expected.length, 'no operation the app does not serve');
    assert.equal(document.paths['/openapi.json'], undefined);
    assert.equal(document.paths['/docs'], undefined);
  });

  test('operations name their credentials, tags and error shapes', () => {
    const op = (path: string, method: string): Json => document.paths[path][method];
    const schemes = (operation: Json): string[] => operation.security.flatMap((requirement: Json) => Object.keys(requirement)).sort();
    assert.deepEqual(schemes(op('/v1/chat/completions', 'post')), ['apiKey']);
    assert.deepEqual(schemes(op('/v1/messages', 'post')), ['anthropicApiKey', 'apiKey']);
    assert.deepEqual(schemes(op('/api/v1/keys', 'post')), ['managementKey', 'session']);
    assert.deepEqual(schemes(op('/admin/v1/users', 'get')), ['adminToken']);
    assert.deepEqual(op('/healthz', 'get').security, []);
    assert.deepEqual(op('/api/v1/models', 'get').security, []);
    assert.equal(document.components.securitySchemes.session.in, 'cookie');
    assert.equal(document.components.securitySchemes.session.name, 'tollgate_session');
    assert.match(document.components.securitySchemes.session.description, /x-csrf-token/);
    assert.equal(document.components.securitySchemes.anthropicApiKey.name, 'x-api-key');

    assert.deepEqual(op('/v1/chat/completions', 'post').tags, ['inference']);
    assert.deepEqual(op('/v1/assistant/chat', 'post').tags, ['assistants']);
    assert.deepEqual(op('/media/tasks/{id}', 'get').tags, ['tasks']);
    assert.deepEqual(op('/api/bot', 'post').tags, ['chatbot']);
    assert.deepEqual(op('/api/v1/keys', 'get').tags, ['management']);
    assert.deepEqual(op('/admin/v1/keys', 'get').tags, ['admin']);
    assert.deepEqual(op('/readyz', 'get').tags, ['health']);

    const errorRef = (operation: Json): string => operation.responses['4XX'].content['application/json'].schema.$ref;
    assert.equal(errorRef(op('/v1/chat/completions', 'post')), '#/components/schemas/ErrorA');
    assert.equal(errorRef(op('/v1/messages', 'post')), '#/components/schemas/ErrorB');
    assert.equal(errorRef(op('/v1/messages/count_tokens', 'post')), '#/components/schemas/ErrorB');
    assert.equal(op('/v1/messages', 'post').responses['401'].content['application/json'].schema.$ref, '#/components/schemas/ErrorA');
    assert.deepEqual(document.components.schemas.ErrorA.properties.error.required, ['message', 'type', 'param', 'code']);

    assert.equal(op('/v1/models/{id}', 'get').operationId, 'models.retrieve');
    assert.deepEqual(op('/v1/models/{id}', 'get').parameters, [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }]);
    const list = op('/api/v1/keys', 'get');
    assert.equal(list.responses['200'].content['application/json'].schema.properties.object.const, 'list');
    assert.ok(list.parameters.some((parameter: Json) => parameter.name === 'limit' && parameter.in === 'query' && parameter.required === false));
  });

  test('request schemas name the real required fields; multipart endpoints are forms', () => {
    const body = (path: string): Json => document.paths[path].post.requestBody.content['application/json'].schema;
    const chat = body('/v1/chat/completions');
    assert.deepEqual([...chat.required].sort(), ['messages', 'model']);
    assert.ok(chat.properties.stream, 'stream is a documented field');
    assert.deepEqual(body('/api/v1/keys').required, ['name']);
    assert.equal(body('/api/v1/keys').additionalProperties, false);
    const form = document.paths['/v1/audio/transcriptions'].post.requestBody.content['multipart/form-data'].schema;
    assert.equal(form.properties.file.format, 'binary');
    assert.ok(form.required.includes('file') && form.required.includes('model'));
    assert.ok(document.paths['/v1/chat/completions'].post.responses['200'].content['text/event-stream'], 'streams are documented');
  });

  test('a declared schema refuses what the handler refuses (the document\'s counter-examples over HTTP → 400 shape A)', async () => {
    const chat = document.paths['/v1/chat/completions'].post.requestBody.content['application/json'].schema;
    const { key } = await gateway.fundedKey();
    // Everything the document requires but its second required field.
    const missing = chat.required.find((field: string) => field !== 'model');
    const chatBody = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } as Json;
    delete chatBody[missing];
    const refused = await jsonClient(gateway.url, key)('POST', '/v1/chat/completions', chatBody);
    assert.equal(refused.status, 400);
    assert.equal((refused.body as Json).error.param, missing);
    assert.equal((refused.body as Json).error.type, 'invalid_request_error');

    const keys = document.paths['/api/v1/keys'].post.requestBody.content['application/json'].schema;
    const customer = await createCustomer(gateway);
    const { call } = await managementKey(gateway, customer.userId);
    const withoutRequired = await call('POST', '/keys', {});
    assert.equal(withoutRequired.status, 400);
    assert.equal((withoutRequired.body as Json).error.param, keys.required[0]);
    // additionalProperties: false — a field the document does not list is refused.
    assert.equal(keys.properties.colour, undefined);
    const unknownField = await call('POST', '/keys', { name: 'scripts', colour: 'blue' });
    assert.equal(unknownField.status, 400);
    assert.equal(typeof (unknownField.body as Json).error.message, 'string');
    // What the document allows is accepted.
    const accepted = await call('POST', '/keys', { name: 'scripts', rpm: keys.properties.rpm.anyOf[0].maximum });
    assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
    const tooFast = await call('POST', '/keys', { name: 'scripts', rpm: keys.properties.rpm.anyOf[0].maximum + 1 });
    assert.equal(tooFast.status, 400);
    assert.equal((tooFast.body as Json).error.param, 'rpm');
  });

  test('every declared body and bounded query parameter refuses the document\'s counter-example over HTTP', async () => {
    const { key } = await gateway.fundedKey();
    const customer = await createCustomer(gateway);
    const management = await managementKey(gateway, customer.userId);
    const credentialOf = (operation: Json): string | null | undefined => {
      const schemes = operation.security.flatMap((requirement: Json) => Object.keys(requirement));
      if (schemes.length === 0) return null;
      if (schemes.includes('apiKey')) return key;
      if (schemes.includes('managementKey')) return management.key;
      if (schemes.includes('adminToken')) return gateway.adminToken;
      return undefined; // the bot token: its routes check it before the body
    };
    const send = async (method: string, path: string, credential: string | null, body?: unknown) => {
      const response = await fetch(`${gateway.url}${path}`, {
        method: method.toUpperCase(),
        headers: { ...(credential ? { authorization: `Bearer ${credential}` } : {}), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, body: (await response.json()) as Json };
    };
    const probed: string[] = [];
    const wrong: string[] = [];
    // A route may look up the thing its path names first (404 for a made-up id): that says nothing about its declaration.
    const refused = (status: number, template: string): boolean => status === 400 || (status === 404 && template.includes('{'));
    for (const [template, item] of Object.entries(document.paths) as [string, Json][]) {
      const path = template.replace(/\{[^}]+\}/g, 'no_such_thing');
      for (const [method, operation] of Object.entries(item) as [string, Json][]) {
        const credential = credentialOf(operation);
        if (credential === undefined) continue;
        const schema = operation.requestBody?.content?.['application/json']?.schema;
        if (schema && (schema.required?.length > 0 || schema.additionalProperties === false)) {
          // Without its required fields, or with a field the document does not list.
          const counterExample = schema.required?.length > 0 ? {} : { no_such_field: 1 };
          const answer = await send(method, path, credential, counterExample);
          probed.push(`${method} ${template}`);
          const shaped = template.startsWith('/v1/messages') ? answer.body.type === 'error' : typeof answer.body.error?.message === 'string';
          if (!refused(answer.status, template) || !shaped) wrong.push(`${method} ${template} body ${JSON.stringify(counterExample)} → ${answer.status} ${JSON.stringify(answer.body)}`);
        }
        for (const parameter of (operation.parameters ?? []) as Json[]) {
          if (parameter.in !== 'query' || typeof parameter.schema.maximum !== 'number') continue;
          const answer = await send(method, `${path}?${parameter.name}=${parameter.schema.maximum + 1}`, credential);
          probed.push(`${method} ${template}?${parameter.name}`);
          if (!refused(answer.status, template) || (answer.status === 400 && answer.body.error?.param !== parameter.name)) wrong.push(`${method} ${template}?${parameter.name}=${parameter.schema.maximum + 1} → ${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }
    }
    assert.ok(probed.length > 40, `probed ${probed.length} declarations`);
    assert.deepEqual(wrong, [], 'declarations the handler does not enforce');
  });

  test('declared response views match real answers', async () => {
    const items = document.paths['/v1/models'].get.responses['200'].content['application/json'].schema.properties.data.items;
    assert.ok(items.required.includes('deprecation_redirect_to') && items.additionalProperties === false);
    const { key } = await gateway.fundedKey();
    const call = jsonClient(gateway.url, key);
    const models = await call<{ data: unknown[] }>('GET', '/v1/models');
    assert.equal(models.status, 200);
    assert.ok(models.body.data.length > 0);
    for (const entry of models.body.data) modelEntry.parse(entry);
    const one = await call<{ id: string }>('GET', `/v1/models/${(models.body.data[0] as { id: string }).id}`);
    modelEntry.parse(one.body);
    const customer = await createCustomer(gateway);
    const management = await managementKey(gateway, customer.userId);
    const created = await management.call<{ id: string }>('POST', '/keys', { name: 'to revoke' });
    const revoked = await management.call('DELETE', `/keys/${created.body.id}`);
    assert.equal(revoked.status, 200);
    deletedResponse.parse(revoked.body);
    assert.deepEqual(await (await fetch(`${gateway.url}/healthz`)).json(), { ok: true });
    assert.deepEqual(document.paths['/healthz'].get.responses['200'].content['application/json'].schema.properties.ok, { type: 'boolean', const: true });
  });

  test('the document is built once and kept', async () => {
    const first = await (await fetch(`${gateway.url}/openapi.json`)).text();
    assert.equal(gateway.app.openApi.json(), first);
    assert.equal(gateway.app.openApi.json(), gateway.app.openApi.json());
  });
});

describe('GET /docs', () => {
  let gateway: TestGateway;
  before(async () => {
    gateway = await startTestGateway();
  });
  after(() => gateway.close());

  test('answers HTML whose every asset is the gateway\'s own, and those assets answer', async () => {
    const response = await fetch(`${gateway.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/html/);
    const html = await response.text();
    const origin = new URL(gateway.url).origin;
    const urls = [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((match) => match[1]!);
    urls.push(...[...html.matchAll(/"url"\s*:\s*"([^"]+)"/g)].map((match) => match[1]!));
    assert.ok(urls.length >= 2, `the page names its script and its document (${urls.join(', ')})`);
    for (const url of urls) {
      const absolute = new URL(url, response.url);
      assert.equal(absolute.origin, origin, `${url} is same-origin`);
      const asset = await fetch(absolute);
      assert.equal(asset.status, 200, `${absolute.pathname} answers`);
      await asset.arrayBuffer();
    }
    assert.doesNotMatch(html, /cdn\.jsdelivr|fonts\.scalar|proxy\.scalar|https?:\/\//, 'no URL to another site in the page');
    assert.match(html, /"withDefaultFonts": false/);
    assert.match(html, /"telemetry": false/);
  });

  test('needs no credential, and TOLLGATE_OPENAPI=false turns both endpoints off', async () => {
    assert.equal((await fetch(`${gateway.url}/openapi.json`)).status, 200);
    const off = await startTestGateway({ config: { openapi: false } });
    try {
      assert.equal((await fetch(`${off.url}/openapi.json`)).status, 404);
      assert.equal((await fetch(`${off.url}/docs/`)).status, 404);
    } finally {
      await off.close();
    }
  });

  test('renders in a browser without a request leaving the gateway', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed` }, async () => {
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      await page.goto(`${gateway.url}/docs`);
      // The reference renders operations lazily: the sidebar lists them all, a click brings one into view.
      const title = 'Create a chat completion (OpenAI format)';
      await page.getByRole('link', { name: title }).first().click({ timeout: 30_000 });
      await page.getByRole('heading', { name: title }).first().waitFor({ timeout: 30_000 });
      const outside = requested.filter((url) => !/^(data|blob|about):/.test(url) && new URL(url).hostname !== '127.0.0.1');
      assert.deepEqual(outside, [], 'requests that left the gateway');
      assert.ok(requested.some((url) => url.endsWith('/openapi.json')), 'the page loaded the document');
    } finally {
      await browser.close();
    }
  });
});
