import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { micros, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, signIn, type Customer, type SignedInClient } from '../helpers/management.ts';
import { advanceAndRun, postOk } from '../helpers/tasks.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

interface LedgerEntry {
  kind: string;
  amount: string;
  keyId: string | null;
  model: string | null;
}

const MANUAL = Array.from({ length: 20 }, (_, index) => `Step ${index}: polish lens number ${index} with a dry cloth.`).join(' ');

/** DESIGN §11 /console/knowledge and /console/tasks in real Chromium, against the management API and the simulator. */
describe('the console\'s knowledge bases and tasks, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let customer: Customer;
  let api: SignedInClient;
  let view: RecordedPage;
  let hook: WebhookReceiver;
  let key: string;

  before(async () => {
    [gw, browser] = await startTogether(startTestGateway(), launchBrowser());
    customer = await createCustomer(gw, { balance: '5.00' });
    api = await signIn(gw, customer);
    ({ key } = await gw.fundedKey({ userId: customer.userId }));
    // The receiver refuses the first delivery (500) and takes the retry, as a server restarting would.
    hook = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: (attempt) => (attempt === 1 ? 500 : 200) });
    view = await openPage(browser);
    await signInThroughForm(view.page, gw.url, customer);
  });
  after(async () => {
    await browser?.close();
    await hook?.close();
    await gw?.close();
  });

  test('a knowledge base is created, a document added (charged what the ledger shows), and the base deleted after a confirmation', async () => {
    const { page } = view;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Knowledge' }).click();
    await page.getByRole('heading', { name: 'Knowledge bases', level: 1 }).waitFor();
    await page.getByText('No knowledge bases yet.').waitFor();
    assert.match(await page.getByLabel('curl example').textContent() ?? '', new RegExp(`^curl ${gw.url}/v1/database/create`));

    await page.getByLabel('Knowledge base title').fill('Lighthouse manuals');
    await page.getByRole('button', { name: 'Create knowledge base' }).click();
    await page.getByRole('heading', { name: 'Knowledge base “Lighthouse manuals”' }).waitFor();
    await page.getByText('No documents yet.').waitFor();

    await page.getByLabel('Document title').fill('Lens care');
    await page.getByLabel('Text', { exact: true }).fill(MANUAL);
    await page.getByRole('button', { name: 'Add document' }).click();
    const added = page.getByRole('status').filter({ hasText: 'Added “Lens care”' });
    await added.waitFor();
    const charged = /charged ([0-9.]+)\./.exec((await added.textContent()) ?? '')?.[1];
    assert.ok(charged, 'the page says what the document cost');

    const ledger = await api.call<{ data: LedgerEntry[] }>('GET', '/ledger?limit=10');
    const charges = ledger.body.data.filter((entry) => entry.kind === 'charge');
    assert.deepEqual(charges.map((entry) => [micros(entry.amount), entry.keyId, entry.model]), [[-micros(charged), 'console', 'text-embedding-3-small']], 'one charge, of the amount shown');
    assert.equal(micros(await gw.balance({ userId: customer.userId })), micros('5.00') - micros(charged));

    const documents = page.getByRole('table', { name: /Documents/ });
    await documents.getByRole('row', { name: /Lens care/ }).waitFor();
    assert.match((await documents.getByRole('row', { name: /Lens care/ }).textContent()) ?? '', new RegExp(`${MANUAL.length.toLocaleString('en')}`));
    const baseRow = page.getByRole('table', { name: /knowledge base/ }).getByRole('row', { name: /Lighthouse manuals/ });
    await baseRow.getByRole('cell').nth(1).filter({ hasText: /^1$/ }).waitFor();
    assert.equal(await baseRow.getByRole('cell').nth(3).textContent(), MANUAL.length.toLocaleString('en'), 'the base\'s size in characters');

    await page.getByRole('button', { name: 'Delete Lighthouse manuals' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the knowledge base “Lighthouse manuals”?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await api.call<{ data: unknown[] }>('GET', '/knowledge')).body.data.length, 1, 'cancel deletes nothing');
    await page.getByRole('button', { name: 'Delete Lighthouse manuals' }).click();
    await dialog.getByRole('button', { name: 'Delete knowledge base' }).click();
    await page.getByRole('status').filter({ hasText: 'Deleted “Lighthouse manuals”.' }).waitFor();
    await page.getByText('No knowledge bases yet.').waitFor();
    assert.deepEqual((await api.call<{ data: unknown[] }>('GET', '/knowledge')).body.data, []);
  });

  test('with no tasks the page teaches a curl call; an image task made with the user\'s key shows with its images and webhook deliveries', async () => {
    const { page } = view;
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { name: 'Tasks', level: 1 }).waitFor();
    await page.getByText('No tasks yet.').waitFor();
    assert.match(await page.getByLabel('curl example').textContent() ?? '', new RegExp(`^curl ${gw.url}/v1/imagegen/imagine`));

    const created = await postOk(gw, '/v1/imagegen/imagine', key, { prompt: 'A lighthouse at dawn', webhook_url: hook.url });
    const id = String(created.body.id);
    await page.reload();
    const row = page.getByRole('row', { name: new RegExp(id) });
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    assert.deepEqual(cells.slice(0, 5), ['Image', 'gpt-image-1', 'idle', '0.04', '2026-11-01 00:00:00']);

    // The job runs; the list, which checks again while a task is unfinished, shows it done without a reload.
    await gw.app.services.runner.runDue();
    await row.getByRole('cell', { name: 'done', exact: true }).waitFor({ timeout: 8_000 });

    await page.getByRole('button', { name: `Details of task ${id}` }).click();
    const details = page.getByRole('region', { name: `Task ${id}` });
    await details.getByText('A lighthouse at dawn').waitFor();
    const links = details.getByRole('link', { name: /^Image \d of 4$/ });
    assert.equal(await links.count(), 4);
    const href = await links.first().getAttribute('href');
    assert.match(href ?? '', new RegExp(`^${gw.url}/v1/files/file_`));
    const image = details.getByRole('img', { name: 'Result image 1' });
    await image.waitFor();
    await page.waitForFunction(() => Array.from(document.images).every((element) => element.complete));
    assert.ok((await image.evaluate((element: HTMLImageElement) => element.naturalWidth)) > 0, 'the result image loaded');

    const deliveries = details.getByRole('table', { name: /Delivery attempts/ });
    assert.deepEqual(await deliveries.getByRole('row').nth(1).getByRole('cell').allTextContents(), ['2026-11-01 00:00:00', 'task.done', 'failed', '500', 'receiver answered 500', '0']);
    await details.getByRole('status').filter({ hasText: 'Next attempt at 2026-11-01 00:00:05 UTC.' }).waitFor();

    // The retry 5 s later succeeds; the open details check again while a delivery is queued.
    await advanceAndRun(gw, 5_000);
    await deliveries.getByRole('row', { name: /^2 / }).waitFor({ timeout: 8_000 });
    assert.deepEqual((await deliveries.getByRole('row', { name: /^2 / }).getByRole('cell').allTextContents()).slice(1, 4), ['task.done', 'delivered', '200']);
    await details.getByRole('status').filter({ hasText: 'Delivered; no further attempts.' }).waitFor();
    assert.equal(hook.received.length, 2);
    assert.ok(hook.received.every((delivery) => delivery.verified));

    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No tasks are failed.').waitFor();
    await page.getByLabel('Status').selectOption('done');
    await page.getByRole('row', { name: new RegExp(id) }).waitFor();
  });

  test('at 375 px both pages fit the screen; nothing loads from elsewhere and the pages raise no errors', async () => {
    const narrow = await openPage(browser, { width: 375 });
    await signInThroughForm(narrow.page, gw.url, customer);
    const base = await api.call<{ id: string }>('POST', '/knowledge', { title: 'A base with a rather long title for a narrow screen' });
    assert.equal((await api.call('POST', `/knowledge/${base.body.id}/documents`, { title: 'A document', text: MANUAL })).status, 200);
    const pageWidth = () => narrow.page.evaluate(() => document.documentElement.scrollWidth);
    for (const [path, open] of [
      ['/console/knowledge', 'Open A base with a rather long title for a narrow screen'],
      ['/console/tasks', /^Details of task /],
    ] as const) {
      await narrow.page.goto(`${gw.url}${path}`);
      await narrow.page.getByRole('heading', { level: 1 }).waitFor();
      await narrow.page.getByRole('table').first().waitFor();
      await narrow.page.waitForLoadState('networkidle');
      assert.ok((await pageWidth()) <= 375, `${path} is ${await pageWidth()} px wide`);
      // Opened, the details (ids in headings, tables of documents or deliveries) still fit.
      await narrow.page.getByRole('button', { name: open }).first().click();
      await narrow.page.getByRole('region').getByRole('table').first().waitFor();
      await narrow.page.waitForLoadState('networkidle');
      assert.ok((await pageWidth()) <= 375, `${path} with its details open is ${await pageWidth()} px wide`);
    }
    await narrow.context.close();
    assert.deepEqual(foreignRequests([...view.requests, ...narrow.requests], gw.url), []);
    assert.deepEqual([...view.problems, ...narrow.problems], []);
  });
});
