import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildWeb } from '../web/build-if-stale.mjs';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

/** DESIGN §11: the gateway serves its web app at the app's paths, never in place of an API route. */
describe('serving the web app', () => {
  let gw: TestGateway;
  before(async () => {
    buildWeb();
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('the app\'s paths answer index.html, revalidated on every load, under a CSP that allows only this origin', async () => {
    for (const path of ['/', '/login', '/signup', '/invite/abc', '/reset/abc', '/confirm-email/abc', '/a/helper', '/console', '/console/keys', '/console/orgs/org_1/api']) {
      const response = await fetch(`${gw.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/, path);
      assert.equal(response.headers.get('cache-control'), 'no-cache', path);
      const policy = response.headers.get('content-security-policy') ?? '';
      assert.match(policy, /default-src 'self'/);
      assert.doesNotMatch(policy, /https?:|\*|unsafe-inline|unsafe-eval/, 'no other origin, no inline code');
      assert.match(await response.text(), /<div id="root">/);
    }
  });

  test('hashed assets are cached for a year as immutable; the page loads nothing from elsewhere', async () => {
    const html = await (await fetch(`${gw.url}/console`)).text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.ok(assets.every((url) => url.startsWith('data:') || (url.startsWith('/') && !url.startsWith('//'))), `only this origin: ${assets.join(' ')}`);
    const files = assets.filter((url) => url.startsWith('/assets/'));
    assert.ok(files.length >= 2, html);
    for (const asset of files) {
      assert.match(asset, /^\/assets\/[\w.-]+-[\w-]{8}\.(js|css)$/, 'a hashed file of this gateway');
      const response = await fetch(`${gw.url}${asset}`);
      assert.equal(response.status, 200, asset);
      assert.equal(response.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
  });

  test('API paths keep their JSON answers: unknown ones are a JSON 404 (or 401 without a key), HEAD / stays 200', async () => {
    const head = await fetch(`${gw.url}/`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal((await fetch(`${gw.url}/healthz`)).status, 200);
    for (const path of ['/v1/nothing', '/api/v1/nothing', '/admin/v1/nothing']) {
      const response = await fetch(`${gw.url}${path}`);
      assert.equal(response.status, 401, path);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
    }
    for (const path of ['/assets/missing-12345678.js', '/assets/../index.html', '/elsewhere', '/consoles']) {
      const response = await fetch(`${gw.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.equal(((await response.json()) as { error: { type: string } }).error.type, 'invalid_request_error', path);
    }
    const models = await fetch(`${gw.url}/api/v1/models`);
    assert.equal(models.status, 200);
    assert.match(models.headers.get('content-type') ?? '', /application\/json/);
  });
});
