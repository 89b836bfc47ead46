import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, startTogether } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { addressesOf, linkIn, startMailServer, type TestMailServer } from '../helpers/mail-server.ts';
import { createCustomer, signIn } from '../helpers/management.ts';

/** The pages behind the links the gateway hands out: /reset/:token and /confirm-email/:token, in real Chromium. */
describe('password reset and email confirmation pages, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    [gw, browser] = await startTogether(startTestGateway(), launchBrowser());
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

/** The same pages with a mail server: the links come by mail, as they do for customers. */
describe('links by mail, in Chromium', () => {
  let gw: TestGateway;
  let mail: TestMailServer;
  let browser: Browser;

  before(async () => {
    mail = await startMailServer();
    [gw, browser] = await startTogether(startTestGateway({ config: { smtpUrl: mail.url, mailFrom: 'Tollgate <no-reply@tollgate.test>' } }), launchBrowser());
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await mail?.close();
  });

  /** Runs the mail jobs until a message to `address` arrives. */
  const mailTo = async (address: string) => {
    for (let round = 0; round < 100; round++) {
      const found = mail.messages.find((message) => addressesOf(message).includes(address.toLowerCase()));
      if (found) return found;
      await gw.app.services.runner.runDue();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no message to ${address}`);
  };

  test('"Forgot your password?" on the sign-in page mails a link whose page sets a password that signs in', async () => {
    const customer = await createCustomer(gw);
    const { page, requests, problems } = await openPage(browser);
    await page.goto(`${gw.url}/login`);
    await page.getByText('Forgot your password?').click();
    await page.getByLabel('Account address for the reset link').fill(customer.email);
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').filter({ hasText: 'If an account has this address, a reset link is on its way' }).waitFor();

    const link = linkIn(await mailTo(customer.email), '/reset/');
    await page.goto(link.url);
    await page.getByLabel('New password', { exact: true }).fill('mailed new password');
    await page.getByLabel('Repeat the new password').fill('mailed new password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('status').filter({ hasText: 'Your password is set' }).waitFor();
    await signInThroughForm(page, gw.url, { email: customer.email, password: 'mailed new password' });
    assert.deepEqual(foreignRequests(requests, gw.url), []);
    assert.deepEqual(problems, []);
  });

  test('the email-change link confirms the new address on a click; it then signs in, and the link opened again is used', async () => {
    const customer = await createCustomer(gw);
    const session = await signIn(gw, customer);
    const newEmail = `renamed-${customer.userId}@example.com`.toLowerCase();
    const asked = await session.call('PATCH', '/me', { email: newEmail, currentPassword: customer.password });
    assert.equal(asked.status, 200, JSON.stringify(asked.body));
    const link = linkIn(await mailTo(newEmail), '/confirm-email/');

    const { page, problems } = await openPage(browser);
    await page.goto(link.url);
    await page.getByRole('button', { name: 'Confirm email' }).click();
    await page.getByRole('status').filter({ hasText: `Your email is now ${newEmail}` }).waitFor();
    await signInThroughForm(page, gw.url, { email: newEmail, password: customer.password });

    await page.goto(link.url);
    await page.getByRole('button', { name: 'Confirm email' }).click();
    await page.getByRole('alert').filter({ hasText: 'This link has been used or has expired' }).waitFor();
    assert.deepEqual(problems, []);
  });
});
