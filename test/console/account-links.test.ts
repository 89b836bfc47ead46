import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { foreignRequests, launchBrowser, openPage, signInThroughForm } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer } from '../helpers/management.ts';

/** The pages behind the links the gateway hands out: /reset/:token and /confirm-email/:token, in real Chromium. */
describe('password reset and email confirmation pages, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    [gw, browser] = await Promise.all([startTestGateway(), launchBrowser()]);
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  test('an operator\'s reset link sets a new password that signs in; the link opened again says it is used or expired', async () => {
    const customer = await createCustomer(gw);
    const link = await gw.admin<{ url: string; expiresAt: string }>('POST', `/users/${customer.userId}/password-reset`);
    assert.equal(link.status, 200, JSON.stringify(link.body));
    assert.ok(link.body.url.startsWith(`${gw.url}/reset/`), link.body.url);

    const { page, requests, problems } = await openPage(browser);
    await page.goto(link.body.url);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Repeat the new password').fill('a brand new password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is set' }).waitFor();

    await page.getByRole('link', { name: 'Sign in' }).click();
    await signInThroughForm(page, gw.url, { email: customer.email, password: 'a brand new password' });
    const old = await fetch(`${gw.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(customer) });
    assert.equal(old.status, 401, 'the old password no longer signs in');

    await page.goto(link.body.url);
    await page.getByRole('alert').filter({ hasText: 'This link has been used or has expired' }).waitFor();
    assert.equal(await page.getByLabel('New password', { exact: true }).count(), 0, 'no form for a used link');

    assert.deepEqual(foreignRequests(requests, gw.url), []);
    assert.deepEqual(problems, []);
  });

  test('two different passwords are refused on the page, and the link stays usable', async () => {
    const customer = await createCustomer(gw);
    const link = await gw.admin<{ url: string }>('POST', `/users/${customer.userId}/password-reset`);
    const { page, problems } = await openPage(browser);
    await page.goto(link.body.url);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Repeat the new password').fill('another password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'the two passwords differ' }).waitFor();
    const token = link.body.url.split('/reset/')[1]!;
    assert.equal((await fetch(`${gw.url}/api/v1/auth/password-reset/${token}`)).status, 200, 'the link was not used');
    assert.deepEqual(problems, []);
  });

  test('an unknown email-confirmation link says it is used or expired after the click', async () => {
    const { page, problems } = await openPage(browser);
    await page.goto(`${gw.url}/confirm-email/not-a-real-token`);
    await page.getByRole('button', { name: 'Confirm email' }).click();
    await page.getByRole('alert').filter({ hasText: 'This link has been used or has expired' }).waitFor();
    assert.deepEqual(problems, []);
  });
});
