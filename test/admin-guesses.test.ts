import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';

const balanceOf = (gw: TestGateway, token: string) =>
  fetch(`${gw.url}/admin/v1/balance?userId=usr_x`, { headers: { authorization: `Bearer ${token}` } });

/** Admin-token guesses are limited per address (10 wrong tokens a minute, counted in memory on each node). */
describe('admin token guesses', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('the eleventh wrong token in a minute is a 429 in shape A with retry-after, until the minute ends', async () => {
    for (let guess = 1; guess <= 10; guess++) {
      assert.equal((await balanceOf(gw, `wrong-token-${guess}-000000000000`)).status, 401, `guess ${guess}`);
    }
    const refused = await balanceOf(gw, 'wrong-token-11-000000000000');
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as { error: { type: string; code: string } };
    assert.equal(body.error.type, 'rate_limit_error');
    assert.equal(body.error.code, 'rate_limit_exceeded');
    assert.equal(refused.headers.get('retry-after'), '60');
    // While refused, even the right token gets no answer that would confirm a guess.
    assert.equal((await balanceOf(gw, gw.adminToken)).status, 429);
    gw.clock.advance(45_000);
    assert.equal((await balanceOf(gw, 'wrong-token-12-000000000000')).headers.get('retry-after'), '15');
    gw.clock.advance(15_000);
    assert.equal((await balanceOf(gw, gw.adminToken)).status, 404, 'a new minute: the right token is served (404: there is no usr_x)');
  });

  test('right tokens are never counted, however many', async () => {
    gw.clock.advance(60_000);
    for (let call = 0; call < 30; call++) assert.notEqual((await balanceOf(gw, gw.adminToken)).status, 429);
    for (let guess = 1; guess <= 10; guess++) assert.equal((await balanceOf(gw, `wrong-${guess}-0000000000000000`)).status, 401);
  });
});
