import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { micros, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, signIn, type Customer, type SignedInClient } from '../helpers/management.ts';

interface UsageRow {
  model?: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cost: string;
}
interface RequestRow {
  id: string;
  model: string;
  status: number;
  cost: string;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** DESIGN §11 in real Chromium: a customer signs in, makes a key, calls a model with it, sees it logged and billed, redeems a voucher. */
describe('the console for a customer, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let customer: Customer;
  let api: SignedInClient;
  let view: RecordedPage;
  let secret = '';

  before(async () => {
    // The browser reads "today" from its own clock: the gateway's manual clock starts at the real time.
    [gw, browser] = await startTogether(startTestGateway({ clock: new ManualClock(Date.now()) }), launchBrowser());
    customer = await createCustomer(gw, { balance: '10.00', name: 'Ada' });
    api = await signIn(gw, customer);
    view = await openPage(browser);
    await view.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: gw.url });
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  test('a signed-out visitor is sent to sign in; a wrong password is shown on the form; the right one opens the console', async () => {
    const { page } = view;
    await page.goto(`${gw.url}/console/keys`);
    await page.waitForURL(/\/login\?next=/);
    await page.getByLabel('Email').fill(customer.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Sign-in failed' }).waitFor();
    await page.getByLabel('Password').fill(customer.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${gw.url}/console/keys`);
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    assert.equal(await page.getByText('Your balance').locator('xpath=following-sibling::dd').textContent(), '10.00');
  });

  test('no keys yet: the page teaches with a curl call to this gateway; a new key is shown once with a copy button', async () => {
    const { page } = view;
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByText('No keys yet.').waitFor();
    assert.match((await page.getByLabel('curl example').first().textContent()) ?? '', new RegExp(`curl ${gw.url}/v1/chat/completions`));

    await page.getByLabel('Key name').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByLabel('Secret key');
    secret = await shown.inputValue();
    assert.match(secret, /^tg-/);
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'the clipboard holds the secret');
    const keys = await api.call<{ data: Array<{ name: string; start: string }> }>('GET', '/keys');
    assert.deepEqual(keys.body.data.map((key) => key.name), ['laptop']);
    await page.getByRole('row', { name: /laptop/ }).getByText(keys.body.data[0]!.start).waitFor();

    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('row', { name: /laptop/ }).waitFor();
    assert.equal((await page.content()).includes(secret), false, 'the secret is never shown again');
  });

  test('a call with the key appears in the request log with its cost, and its detail view names the request', async () => {
    const response = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from the console test' }] }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    await response.json();
    const requestId = response.headers.get('x-request-id')!;
    await gw.app.services.requestLog.flush();
    const logged = await api.call<{ data: RequestRow[] }>('GET', '/requests');
    const row = logged.body.data.find((entry) => entry.id === requestId);
    assert.ok(row, 'the API lists the request');

    const { page } = view;
    await page.getByRole('link', { name: 'Requests' }).click();
    const tableRow = page.getByRole('row').filter({ has: page.getByRole('button', { name: `Details of request ${requestId}` }) });
    await tableRow.waitFor();
    const cells = await tableRow.getByRole('cell').allTextContents();
    assert.ok(cells.includes('gpt-4o-mini') && cells.includes('200') && cells.includes(row.cost), `row cells ${JSON.stringify(cells)} show model, status and cost ${row.cost}`);
    await tableRow.getByRole('button', { name: `Details of request ${requestId}` }).click();
    await page.getByRole('heading', { name: `Request ${requestId}` }).waitFor();
  });

  test('the usage page shows the spend the API reports, with spend and token charts; the overview counts it in today', async () => {
    const today = utcDay(gw.clock.now());
    const expected = await api.call<{ data: UsageRow[] }>('GET', `/usage?from=${today}&to=${today}&groupBy=model`);
    const model = expected.body.data.find((entry) => entry.model === 'gpt-4o-mini')!;
    assert.ok(model && micros(model.cost) > 0n, JSON.stringify(expected.body));

    const { page } = view;
    await page.getByRole('link', { name: 'Usage' }).click();
    const row = page.getByRole('table', { name: /^Usage from/ }).getByRole('row', { name: /^gpt-4o-mini/ });
    await row.waitFor();
    assert.deepEqual(await row.getByRole('cell').allTextContents(), [String(model.requests), '0', String(model.input_tokens), String(model.output_tokens), model.cost]);
    await page.getByRole('img', { name: 'Daily spend by model' }).locator('canvas').first().waitFor();
    await page.getByRole('img', { name: 'Daily tokens by model' }).locator('canvas').first().waitFor();

    await page.getByLabel('Group by').selectOption('endpoint');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('columnheader', { name: 'Endpoint' }).waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Export CSV' }).click();
    const csv = await (await download).createReadStream();
    let text = '';
    for await (const chunk of csv) text += String(chunk);
    assert.match(text.split('\n')[0]!, /^endpoint,requests,errors,input_tokens,output_tokens/);
    assert.equal(text.trim().split('\n').length, 2, text);

    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('img', { name: /Daily spend by model/ }).locator('canvas').first().waitFor();
    const spendToday = await page.getByText('Spend today').locator('xpath=following-sibling::dd').textContent();
    assert.equal(micros(spendToday ?? ''), micros(model.cost), `spend today ${spendToday} is the call's ${model.cost}`);
  });

  test('redeeming a voucher raises the balance by its amount', async () => {
    const made = await gw.admin<{ codes: string[] }>('POST', '/vouchers', { amount: '2.50', count: 1 });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const before = (await api.call<{ balance: string }>('GET', '/me')).body.balance;

    const { page } = view;
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByLabel('Voucher code').fill(made.body.codes[0]!);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('status').filter({ hasText: 'Added 2.50' }).waitFor();
    const afterRedeem = (await api.call<{ balance: string }>('GET', '/me')).body.balance;
    assert.equal(micros(afterRedeem) - micros(before), micros('2.50'));
    await page.getByRole('row', { name: `You ${afterRedeem}` }).waitFor();
    await page.getByRole('cell', { name: 'voucher' }).first().waitFor();

    await page.getByLabel('Voucher code').fill(made.body.codes[0]!);
    await page.getByRole('button', { name: 'Redeem' }).click();
    await page.getByRole('alert').filter({ hasText: 'Redeeming failed' }).waitFor();
    assert.equal((await api.call<{ balance: string }>('GET', '/me')).body.balance, afterRedeem, 'a code pays once');
  });

  test('revoking a key asks first; once confirmed the key stops working', async () => {
    const { page } = view;
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke the key “laptop”?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('row', { name: /laptop/ }).waitFor();
    assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status, 200, 'cancel keeps the key');

    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('No keys yet.').waitFor();
    assert.equal((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status, 401);
  });

  test('at 375 px wide the pages fit the screen; every page request stayed on the gateway', async () => {
    const narrow = await openPage(browser, { width: 375 });
    await signInThroughForm(narrow.page, gw.url, customer);
    for (const path of ['/console', '/console/keys', '/console/usage', '/console/requests', '/console/billing', '/']) {
      await narrow.page.goto(`${gw.url}${path}`);
      await narrow.page.getByRole('heading', { level: 1 }).waitFor();
      await narrow.page.waitForLoadState('networkidle');
      const width = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 375, `${path} is ${width} px wide`);
    }
    await narrow.context.close();
    const all = [...view.requests, ...narrow.requests];
    assert.ok(all.some((url) => url.includes('/assets/')), 'the app loaded its assets');
    assert.deepEqual(foreignRequests(all, gw.url), []);
    assert.deepEqual([...view.problems, ...narrow.problems], []);
  });
});
