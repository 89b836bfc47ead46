import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, type Customer } from '../helpers/management.ts';

interface AdminModel {
  id: string;
  kind: string;
  cost_context: string;
  cost_completion: string;
  deprecated: boolean;
  deprecated_at: string | null;
  deprecation_redirect_to: string | null;
}

const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** DESIGN §11's operator pages in Chromium: /console/admin/models edits prices in place and retires a model with an analogue. */
describe('the operator\'s models page, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let operator: Customer;
  let view: RecordedPage;

  before(async () => {
    // The page reads "the last 7 days" from the browser's clock: the gateway's manual clock starts at the real time.
    [gw, browser] = await startTogether(startTestGateway({ clock: new ManualClock(Date.now()) }), launchBrowser());
    operator = await createCustomer(gw, { operator: true, name: 'Olga the operator' });
    view = await openPage(browser);
    await signInThroughForm(view.page, gw.url, operator);
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  test('a customer who is not an operator has no link to the operator pages and is told so on them', async () => {
    const customer = await createCustomer(gw);
    const { page, problems } = await openPage(browser);
    await signInThroughForm(page, gw.url, customer);
    await page.getByRole('link', { name: 'Billing' }).waitFor();
    await page.getByText(customer.email).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Operator' }).count(), 0);
    await page.goto(`${gw.url}/console/admin/models`);
    await page.getByRole('alert').filter({ hasText: 'This page is for the gateway\'s operators' }).waitFor();
    assert.equal(await page.getByRole('table').count(), 0);
    assert.deepEqual(problems, []);
  });

  test('the operator changes a price in place and the admin API shows it', async () => {
    const { page } = view;
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name: 'Models', exact: true }).click();
    await page.getByRole('heading', { name: 'Models', level: 1 }).waitFor();
    const output = page.getByLabel('Output price of gpt-4o', { exact: true });
    await output.fill('0.0123');
    await page.getByRole('button', { name: 'Save prices of gpt-4o', exact: true }).click();
    await page.getByRole('row', { name: /^gpt-4o\b/ }).first().getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const model = await gw.admin<AdminModel>('GET', '/models/gpt-4o');
    assert.equal(model.body.cost_completion, '0.0123');
  });

  test('the operator retires a model with an analogue after seeing the key that called it; calls to it then carry the deprecation headers', async () => {
    const { key, keyId, userId } = await gw.fundedKey();
    const call = () =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello before the retirement' }] }),
      });
    const before = await call();
    assert.equal(before.status, 200, await before.clone().text());
    await before.json();
    assert.equal(before.headers.get('deprecation'), null);
    await gw.app.services.requestLog.flush();

    const { page, requests, problems } = view;
    await page.goto(`${gw.url}/console/admin/models`);
    await page.getByRole('button', { name: 'Retire gpt-4o-mini', exact: true }).click();
    const panel = page.getByRole('region', { name: 'Retire gpt-4o-mini' });
    const callers = panel.getByRole('table', { name: 'Keys that called gpt-4o-mini in the last 7 days' });
    await callers.waitFor();
    const row = callers.getByRole('row').filter({ hasText: keyId });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    assert.ok(cells[0] === keyId && cells[2] === '1', `the key ${keyId} is listed with its one request: ${JSON.stringify(cells)}`);
    const user = await gw.admin<{ name: string }>('GET', `/users/${userId}`);
    assert.ok(cells[1]!.startsWith(user.body.name), `the key's user is named: ${JSON.stringify(cells)}`);

    const yesterday = utcDay(gw.clock.now() - 86_400_000);
    await panel.getByLabel('Retirement date').fill(yesterday);
    await panel.getByLabel('Analogue').selectOption('gpt-4o');
    await panel.getByRole('button', { name: 'Confirm retirement' }).click();
    await page.getByRole('row', { name: /^gpt-4o-mini/ }).getByText('analogue: gpt-4o').waitFor();
    assert.equal(await page.getByRole('region', { name: 'Retire gpt-4o-mini' }).count(), 0, 'the panel closes');

    const model = await gw.admin<AdminModel>('GET', '/models/gpt-4o-mini');
    assert.equal(model.body.deprecated_at, `${yesterday}T00:00:00.000Z`);
    assert.equal(model.body.deprecation_redirect_to, 'gpt-4o');
    assert.equal(model.body.deprecated, true);

    const after = await call();
    assert.equal(after.status, 200, await after.clone().text());
    const body = (await after.json()) as { model: string };
    assert.equal(after.headers.get('deprecation'), 'true');
    assert.ok(after.headers.get('sunset'), 'a Sunset header');
    assert.match(after.headers.get('warning') ?? '', /^299 - "/);
    assert.equal(after.headers.get('x-model-requested'), 'gpt-4o-mini');
    assert.equal(after.headers.get('x-model-served'), 'gpt-4o');
    assert.equal(body.model, 'gpt-4o-mini');

    assert.deepEqual(foreignRequests(requests, gw.url), []);
    assert.deepEqual(problems, []);
  });
});
