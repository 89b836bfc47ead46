import assert from 'node:assert/strict';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { mock, test } from 'node:test';
import { request } from 'undici';
import { startFunctionServer } from '../../test/helpers/function-server.ts';
import { guardedDispatcher, RefusedUrlError, sendOutbound } from './outbound-http.ts';
import { refuseUrl } from './url-guard.ts';

const POLICY = { allowPrivateUrls: false, timeoutMs: 5_000, maxResponseBytes: 1024 };

const BYPASSES = [
  'http://[::127.0.0.1]/',
  'http://[::7f00:1]/',
  'http://[64:ff9b::7f00:1]/',
  'http://[64:ff9b::a00:1]/',
  'http://[64:ff9b:1::1]/',
  'http://[2002:7f00:1::]/',
  'http://[2002:c0a8:101::1]/',
  'http://[::ffff:127.0.0.1]/',
];

test('IPv6 forms that carry a private IPv4 address are refused by refuseUrl and by the outbound helper', async () => {
  for (const url of BYPASSES) {
    assert.equal(await refuseUrl(url, false), 'must not point to a private or loopback address', url);
    await assert.rejects(sendOutbound(url, { method: 'GET' }, POLICY), RefusedUrlError, url);
  }
});

test('public addresses, embedded ones included, pass the guard', async () => {
  for (const url of ['http://1.1.1.1/', 'http://[2606:4700::1111]/', 'http://[64:ff9b::808:808]/', 'http://[2002:808:808::1]/', 'http://[::ffff:8.8.8.8]/']) {
    assert.equal(await refuseUrl(url, false), undefined, url);
  }
});

// `refuseUrl` checks a URL before a call; the dispatcher checks again where the connection is made.
test('a host name that resolves to a public address when checked and to 127.0.0.1 when connecting is refused (DNS rebinding)', async () => {
  const server = await startFunctionServer((_request, response) => response.end('reached'));
  const port = new URL(server.url).port;
  mock.method(dns.promises, 'lookup', async () => [{ address: '93.184.216.34', family: 4 }]);
  mock.method(dns, 'lookup', (_host: string, _options: unknown, callback: (error: null, addresses: Array<{ address: string; family: number }>) => void) =>
    callback(null, [{ address: '127.0.0.1', family: 4 }]),
  );
  syncBuiltinESMExports();
  try {
    assert.equal(await refuseUrl(`http://rebinding.example:${port}/`, false), undefined, 'the check before the call passes');
    await assert.rejects(sendOutbound(`http://rebinding.example:${port}/`, { method: 'GET' }, POLICY), /rebinding\.example resolves to a private or loopback address/);
    assert.equal(server.requests.length, 0, 'nothing reached the private address');
    const allowed = await sendOutbound(`http://rebinding.example:${port}/`, { method: 'GET' }, { ...POLICY, allowPrivateUrls: true });
    assert.equal(allowed.body.toString(), 'reached', 'with private URLs allowed the same name is served');
  } finally {
    mock.restoreAll();
    syncBuiltinESMExports();
    await server.close();
  }
});

test('the public-only dispatcher also refuses an IP-literal private host (a redirect target never sees a lookup)', async () => {
  const server = await startFunctionServer((_request, response) => response.end('reached'));
  try {
    await assert.rejects(request(server.url, { dispatcher: guardedDispatcher(false) }), /127\.0\.0\.1 is a private or loopback address/);
    assert.equal(server.requests.length, 0);
  } finally {
    await server.close();
  }
});

test('redirects are returned, not followed; bodies are cut at the size limit', async () => {
  const server = await startFunctionServer((incoming, response) => {
    if (incoming.url === '/redirect') {
      response.writeHead(302, { location: '/big' }).end();
      return;
    }
    response.end('x'.repeat(5_000));
  });
  try {
    const policy = { ...POLICY, allowPrivateUrls: true };
    const redirect = await sendOutbound(`${server.url}/redirect`, { method: 'GET' }, policy);
    assert.equal(redirect.status, 302);
    assert.equal(server.requests.length, 1);
    const big = await sendOutbound(`${server.url}/big`, { method: 'GET' }, policy);
    assert.equal(big.body.length, 1024);
    assert.equal(big.complete, false);
  } finally {
    await server.close();
  }
});
