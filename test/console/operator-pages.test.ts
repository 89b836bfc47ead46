import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, type Customer } from '../helpers/management.ts';
import { advanceAndRun, postOk } from '../helpers/tasks.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

interface LedgerRow {
  amount: string;
  kind: string;
  note: string | null;
}

interface AuditRow {
  action: string;
  actor: { type: string; id: string | null };
  target: { type: string; id: string | null };
}

const OPERATORS_ONLY = "This page is for the gateway's operators only.";

/** The cells of a table row as text, header cell first. */
const cellsOf = async (row: Locator): Promise<string[]> => (await row.locator('th, td').allTextContents()).map((text) => text.trim());

/** Opens an operator page from the operator's navigation, as a person does. */
async function openOperatorPage(page: Page, name: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Operator' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

/** DESIGN §11's operator pages in Chromium: users, orgs, keys, vouchers, deliveries, audit log, providers. */
describe("the operator's pages, in Chromium", () => {
  let gw: TestGateway;
  let browser: Browser;
  let operator: Customer;
  let view: RecordedPage;
  const receivers: WebhookReceiver[] = [];

  before(async () => {
    // Session cookies expire by the gateway's clock: it starts at the real time so the browser keeps them.
    [gw, browser] = await startTogether(startTestGateway({ clock: new ManualClock(Date.now()) }), launchBrowser());
    operator = await createCustomer(gw, { operator: true, name: 'Olga the operator' });
    view = await openPage(browser);
    await signInThroughForm(view.page, gw.url, operator);
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await browser?.close();
    await gw?.close();
  });

  test('a customer who is not an operator sees no operator data: no link, the pages say they are for operators, no admin API call', async () => {
    const customer = await createCustomer(gw, { name: 'Carl the customer' });
    const { page, requests, problems } = await openPage(browser);
    await signInThroughForm(page, gw.url, customer);
    await page.getByText(customer.email).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Operator' }).count(), 0);
    for (const path of ['/console/admin/users', '/console/admin/audit']) {
      await page.goto(`${gw.url}${path}`);
      await page.getByRole('alert').filter({ hasText: OPERATORS_ONLY }).waitFor();
      assert.equal(await page.getByRole('table').count(), 0, `${path} shows no table`);
      assert.equal(await page.getByRole('navigation', { name: 'Operator' }).count(), 0);
    }
    assert.deepEqual(requests.filter((url) => url.includes('/admin/v1/')), [], 'the pages asked the admin API nothing');
    assert.deepEqual(problems, []);
  });

  test("an operator whose rights end while the page is open gets the admin API's 403, shown as operators only", async () => {
    const olaf = await createCustomer(gw, { operator: true, name: 'Olaf, operator until today' });
    const { page, problems } = await openPage(browser);
    await signInThroughForm(page, gw.url, olaf);
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    assert.equal((await gw.admin('PATCH', `/users/${olaf.userId}`, { operator: false })).status, 200);
    await openOperatorPage(page, 'Keys', 'Keys');
    await page.getByRole('alert').filter({ hasText: `${OPERATORS_ONLY} (403)` }).waitFor();
    assert.deepEqual(problems, []);
  });

  test("the operator credits a user with a note: the page, the user's ledger and the admin API show it; a resent credit books once", async () => {
    const customer = await createCustomer(gw, { name: 'Bella Bookings', balance: '10.00' });
    const { page } = view;
    await page.getByRole('link', { name: 'Operator' }).click();
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByLabel('Name, email or id').fill(customer.email);
    await page.getByRole('button', { name: 'Search' }).click();
    const table = page.getByRole('table', { name: `Users matching “${customer.email}”` });
    await table.getByRole('row').filter({ hasText: customer.email }).getByRole('link', { name: 'Bella Bookings' }).click();
    await page.getByRole('heading', { name: 'Bella Bookings', level: 1 }).waitFor();

    // A note is required; nothing moves without one.
    await page.getByLabel('Amount').fill('5.00');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Write a note' }).waitFor();
    assert.equal(await gw.balance({ userId: customer.userId }), '10.00');

    await page.getByLabel('Note', { exact: true }).fill('goodwill for the outage');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Credited 5.00 (goodwill for the outage). The balance is now 15.00.' }).waitFor();
    await page.locator('.figures').getByText('15.00', { exact: true }).waitFor();
    const ledger = page.getByRole('region', { name: 'Recent ledger' });
    const row = ledger.getByRole('row').filter({ hasText: 'goodwill for the outage' });
    await row.waitFor();
    const cells = await cellsOf(row);
    assert.deepEqual([cells[1], cells[2], cells[3]], ['credit', '5.00', 'goodwill for the outage']);

    assert.equal(await gw.balance({ userId: customer.userId }), '15.00');
    const entries = await gw.admin<{ data: LedgerRow[] }>('GET', `/ledger?userId=${customer.userId}`);
    assert.deepEqual(entries.body.data.filter((entry) => entry.note === 'goodwill for the outage').map((entry) => entry.amount), ['5.00']);

    // The answer to a debit is lost on the way back (the gateway booked it); sending the same form again books nothing more.
    let dropped = 0;
    await page.route('**/admin/v1/balance', async (route) => {
      if (dropped++ === 0) {
        await route.fetch();
        await route.abort('connectionreset');
      } else {
        await route.continue();
      }
    });
    await page.getByLabel('Amount').fill('2.50');
    await page.getByLabel('Note', { exact: true }).fill('duplicate signup bonus');
    await page.getByRole('button', { name: 'Debit', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'The balance change was not confirmed' }).waitFor();
    await page.getByRole('button', { name: 'Debit', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Debited 2.50 (duplicate signup bonus). The balance is now 12.50.' }).waitFor();
    await page.unroute('**/admin/v1/balance');
    assert.equal(dropped, 2);
    assert.equal(await gw.balance({ userId: customer.userId }), '12.50');
    const after = await gw.admin<{ data: LedgerRow[] }>('GET', `/ledger?userId=${customer.userId}`);
    assert.deepEqual(after.body.data.filter((entry) => entry.note === 'duplicate signup bonus').map((entry) => entry.amount), ['-2.50'], 'one debit, not two');
    await ledger.getByRole('row').filter({ hasText: 'duplicate signup bonus' }).getByRole('cell', { name: '-2.50', exact: true }).waitFor();
  });

  test("the operator makes a user an operator after confirming, and issues a password-reset link that opens the reset page", async () => {
    const customer = await createCustomer(gw, { name: 'Nina New-operator' });
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users/${customer.userId}`);
    await page.getByRole('heading', { name: 'Nina New-operator', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Make operator' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Make operator' }).click();
    await page.getByRole('button', { name: 'Remove operator rights' }).waitFor();
    assert.equal((await gw.admin<{ operator: boolean }>('GET', `/users/${customer.userId}`)).body.operator, true);

    await page.getByRole('button', { name: 'Issue a password-reset link' }).click();
    const link = await page.getByLabel(/^Password-reset link/).inputValue();
    assert.ok(link.startsWith(`${gw.url}/reset/`), `a link to this gateway's reset page: ${link}`);
    const stranger = await openPage(browser);
    await stranger.page.goto(link);
    await stranger.page.getByLabel('New password', { exact: true }).waitFor();
    await stranger.context.close();
  });

  test("an org's page lists its members, changes a role, keeps the last owner, removes a member; the operator credits the org", async () => {
    const owner = await createCustomer(gw, { name: 'Oscar Owner' });
    const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme Widgets', ownerId: owner.userId, balance: '1.00' });
    assert.equal(org.status, 200);
    const helper = await createCustomer(gw, { name: 'Hana Helper' });
    assert.equal((await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: helper.userId, role: 'member' })).status, 200);
    const roles = async () =>
      Object.fromEntries((await gw.admin<{ data: Array<{ userId: string; role: string }> }>('GET', `/orgs/${org.body.id}/members`)).body.data.map((member) => [member.userId, member.role]));
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Orgs', 'Organizations');
    await page.getByRole('link', { name: 'Acme Widgets' }).click();
    await page.getByRole('heading', { name: 'Acme Widgets', level: 1 }).waitFor();
    const member = page.getByRole('table', { name: 'Members: 2' }).getByRole('row', { name: /Oscar Owner/ });
    await member.waitFor();
    assert.equal((await cellsOf(member))[0], 'Oscar Owner');
    assert.equal(await page.getByLabel(`Role of ${owner.email}`).inputValue(), 'owner');

    await page.getByLabel(`Role of ${helper.email}`).selectOption('admin');
    for (let tries = 0; tries < 50 && (await roles())[helper.userId] !== 'admin'; tries++) await page.waitForTimeout(20);
    assert.deepEqual(await roles(), { [owner.userId]: 'owner', [helper.userId]: 'admin' });
    await page.getByLabel(`Role of ${owner.email}`).selectOption('member');
    await member.getByRole('alert').filter({ hasText: 'Changing the role failed: The organization must keep an owner' }).waitFor();
    assert.equal((await roles())[owner.userId], 'owner', 'the last owner stays');

    await page.getByRole('button', { name: `Remove ${helper.email}` }).click();
    await page.getByRole('dialog', { name: `Remove ${helper.email} from the organisation?` }).getByRole('button', { name: 'Remove member' }).click();
    await page.getByRole('table', { name: 'Members: 1' }).waitFor();
    assert.deepEqual(await roles(), { [owner.userId]: 'owner' });
    await page.getByLabel('Amount').fill('9.00');
    await page.getByLabel('Note', { exact: true }).fill('partner credit');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'The balance is now 10.00.' }).waitFor();
    assert.equal(await gw.balance({ orgId: org.body.id }), '10.00');
  });

  test('disabling a key makes a call with it 401; enabling brings it back; revoking after the confirmation ends it', async () => {
    const { key, keyId } = await gw.fundedKey();
    const call = async () => (await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status;
    assert.equal(await call(), 200);
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Keys', 'Keys');
    await page.getByLabel('Name, id or start of the key').fill(keyId);
    await page.getByRole('button', { name: 'Filter' }).click();
    const row = page.getByRole('table', { name: 'Keys that match, newest first' }).getByRole('row').filter({ hasText: keyId });
    await row.getByRole('button', { name: /^Disable key/ }).click();
    await row.getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    assert.equal(await call(), 401, 'a disabled key is refused');

    await row.getByRole('button', { name: /^Enable key/ }).click();
    await row.getByRole('cell', { name: 'active', exact: true }).waitFor();
    assert.equal(await call(), 200, 'enabled again');

    await row.getByRole('button', { name: 'Revoke', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(await call(), 200, 'cancel keeps the key');
    await row.getByRole('button', { name: 'Revoke', exact: true }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    // A revoked key leaves the list unless revoked keys are asked for.
    await page.getByRole('table', { name: 'Keys that match, newest first' }).getByText('No keys match.').waitFor();
    assert.equal(await call(), 401, 'a revoked key is refused');
    const stored = await gw.admin<{ revokedAt: string | null; disabled: boolean }>('GET', `/keys/${keyId}`);
    assert.ok(stored.body.revokedAt, 'the admin API shows it revoked');
  });

  test('the operator creates a voucher; a customer redeems it on the billing page; the list shows it redeemed', async () => {
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Vouchers', 'Vouchers');
    await page.getByLabel('Amount per code').fill('7.50');
    await page.getByLabel('Number of codes').fill('1');
    await page.getByLabel('Note', { exact: true }).fill('spring fair');
    await page.getByRole('button', { name: 'Create codes' }).click();
    const codes = page.getByRole('list', { name: 'New voucher codes' });
    await codes.waitFor();
    const [code] = (await codes.getByRole('listitem').allTextContents()).map((text) => text.trim());
    assert.ok(code && code.length >= 8, `a code is shown: ${code}`);
    await page.getByRole('button', { name: 'I have copied them' }).click();
    const voucherRow = page.getByRole('row').filter({ hasText: 'spring fair' });
    await voucherRow.waitFor();
    assert.equal((await cellsOf(voucherRow))[2], 'active');

    const customer = await createCustomer(gw, { name: 'Rita Redeemer', balance: '1.00' });
    const shopper = await openPage(browser);
    await signInThroughForm(shopper.page, gw.url, customer);
    await shopper.page.getByRole('link', { name: 'Billing' }).click();
    await shopper.page.getByLabel('Voucher code').fill(code!);
    await shopper.page.getByRole('button', { name: 'Redeem' }).click();
    await shopper.page.getByRole('status').filter({ hasText: 'Added 7.50. The balance is now 8.50.' }).waitFor();
    assert.equal(await gw.balance({ userId: customer.userId }), '8.50');
    await shopper.context.close();

    await page.getByLabel('State').selectOption('redeemed');
    await page.getByRole('button', { name: 'Filter' }).click();
    const redeemed = page.getByRole('row').filter({ hasText: 'spring fair' });
    await redeemed.getByRole('link', { name: customer.userId }).waitFor();
    assert.equal((await cellsOf(redeemed))[2], 'redeemed');
  });

  test('a webhook that failed for good is listed and retried from the deliveries page; the receiver then gets it', async () => {
    const { key } = await gw.fundedKey({ balance: '20.00' });
    let answer = 503;
    const receiver = await startWebhookReceiver({ apiKey: () => key, clock: gw.clock, behaviour: () => answer });
    receivers.push(receiver);
    const created = await postOk(gw, '/api/v2/media/tasks', key, { model: 'tts-1', prompt: 'tell me when done', webhook_url: receiver.url });
    const taskId = String(created.body.id);
    await gw.app.services.runner.runDue();
    for (const pause of [5_000, 20_000, 60_000, 180_000]) await advanceAndRun(gw, pause);
    assert.equal(receiver.received.length, 5, 'every automatic retry was used');

    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Deliveries', 'Webhook deliveries');
    const failed = page.getByRole('table', { name: /failed for good/ });
    const row = failed.getByRole('row').filter({ hasText: taskId });
    await row.waitFor();
    const cells = await cellsOf(row);
    assert.deepEqual([cells[1], cells[2], cells[4]], ['failed for good', '5', 'HTTP 503']);

    answer = 200;
    await row.getByRole('button', { name: `Retry the webhook of task ${taskId}` }).click();
    await page.getByRole('status').filter({ hasText: `The webhook of task ${taskId} is queued again` }).waitFor();
    await failed.getByRole('row').filter({ hasText: taskId }).waitFor({ state: 'detached' });
    await gw.app.services.runner.runDue();
    assert.equal(receiver.received.length, 6);
    assert.ok(receiver.received[5]!.verified, 'signed afresh with the creating key');

    await page.getByLabel('Webhooks').selectOption('delivered');
    await page.getByRole('button', { name: 'Show' }).click();
    const delivered = page.getByRole('table', { name: 'Delivered webhooks, newest first' }).getByRole('row').filter({ hasText: taskId });
    await delivered.waitFor();
    assert.deepEqual((await cellsOf(delivered)).slice(1, 3), ['delivered', '6']);
    const attempts = await gw.admin<{ data: Array<{ attempt: number; status: string }> }>('GET', `/deliveries?taskId=${taskId}`);
    assert.deepEqual(attempts.body.data.at(-1), { ...attempts.body.data.at(-1), attempt: 6, status: 'delivered' });
  });

  test("the providers page lists each stored provider's base URL and whether a key is set, never the key; stores, changes and deletes one", async () => {
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Providers', 'Providers');
    const table = page.getByRole('table', { name: 'Stored providers' });
    await table.getByText('No provider is stored').waitFor();

    const secret = 'sk-backup-0123456789abcdef';
    assert.equal((await gw.admin('PUT', '/providers/openai-backup', { type: 'openai', baseUrl: 'https://backup.example.com/v1', apiKey: secret })).status, 200);
    assert.equal((await gw.admin('PUT', '/providers/claude-proxy', { type: 'anthropic', baseUrl: 'https://claude-proxy.example.com' })).status, 200);
    await page.reload();
    const backup = table.getByRole('row', { name: /^openai-backup\b/ });
    await backup.waitFor();
    assert.deepEqual((await cellsOf(backup)).slice(0, 5), ['openai-backup', 'openai', 'https://backup.example.com/v1', '1', 'set']);
    assert.deepEqual((await cellsOf(table.getByRole('row', { name: /^claude-proxy\b/ }))).slice(0, 5), ['claude-proxy', 'anthropic', 'https://claude-proxy.example.com', '1', 'not set']);
    await page.getByRole('region', { name: 'Channels of openai-backup' }).waitFor();
    const backupChannels = page.getByRole('table', { name: 'openai-backup channels and their health' });
    assert.deepEqual(await cellsOf(backupChannels.getByRole('row', { name: /^default\b/ })), ['default', 'https://backup.example.com/v1', 'set', '1', '0', 'all', 'healthy', '0', '0', '0.0 %', '—', '—']);

    // Several channels (issue 15): each with its weight, priority, models and the health its traffic gives it.
    const pooled = { type: 'openai', channels: [
      { id: 'east', baseUrl: `${gw.simulator.url}/v1`, apiKey: 'sk-east-0123456789', weight: 3, priority: 1 },
      { id: 'west', baseUrl: `${gw.simulator.url}/v1`, weight: 1, models: ['pooled-model'] },
    ] };
    assert.equal((await gw.admin('PUT', '/providers/pooled', pooled)).status, 200);
    assert.equal((await gw.admin('PUT', '/models/pooled-model', { kind: 'chat', provider: 'pooled', upstreamModel: 'gpt-4o-mini' })).status, 200);
    const { key } = await gw.fundedKey();
    const reply = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'pooled-model', messages: [{ role: 'user', content: 'through a channel' }] }),
    });
    assert.equal(reply.status, 200, await reply.text());
    await page.reload();
    const channels = page.getByRole('table', { name: 'pooled channels and their health' });
    const east = channels.getByRole('row', { name: /^east\b/ });
    await east.waitFor();
    const eastCells = await cellsOf(east);
    assert.deepEqual(eastCells.slice(0, 9), ['east', `${gw.simulator.url}/v1`, 'set', '3', '1', 'all', 'healthy', '1', '0']);
    assert.match(eastCells[10]!, /^\d+(\.\d)? ms$/, 'latency p50 of the one request');
    assert.deepEqual((await cellsOf(channels.getByRole('row', { name: /^west\b/ }))).slice(0, 8), ['west', `${gw.simulator.url}/v1`, 'not set', '1', '0', 'pooled-model', 'healthy', '0']);
    assert.ok(!(await page.content()).includes('sk-east-0123456789'), 'no channel key on the page');
    assert.ok(!(await page.content()).includes(secret), 'the API key is nowhere on the page');

    // Stored from the page, then changed with the key left empty (kept), then deleted; one a model routes to stays.
    const form = page.getByRole('form', { name: 'Store a provider' });
    const store = async (baseUrl: string, apiKey: string) => {
      await form.getByLabel('Provider id').fill('mirror');
      await form.getByLabel('Type').selectOption('openai');
      await form.getByLabel('Base URL').fill(baseUrl);
      await form.getByLabel('API key').fill(apiKey);
      await form.getByRole('button', { name: 'Store provider' }).click();
    };
    await store('https://mirror.example.com/v1', 'sk-mirror-0123456789');
    await page.getByRole('status').filter({ hasText: 'Provider mirror was stored.' }).waitFor();
    const mirror = table.getByRole('row', { name: /^mirror\b/ });
    await mirror.getByRole('cell', { name: 'set', exact: true }).waitFor();
    assert.deepEqual((await cellsOf(mirror)).slice(0, 5), ['mirror', 'openai', 'https://mirror.example.com/v1', '1', 'set']);
    await store('https://mirror-two.example.com/v1', '');
    await page.getByRole('status').filter({ hasText: 'Provider mirror was changed.' }).waitFor();
    await mirror.getByRole('cell', { name: 'https://mirror-two.example.com/v1' }).waitFor();
    const stored = await gw.admin<{ data: Array<{ id: string; baseUrl: string; hasApiKey: boolean }> }>('GET', '/providers');
    assert.deepEqual(stored.body.data.filter((provider) => provider.id === 'mirror').map((provider) => [provider.baseUrl, provider.hasApiKey]), [['https://mirror-two.example.com/v1', true]], 'an empty key field keeps the key');
    assert.ok(!(await page.content()).includes('sk-mirror-0123456789'), 'the new key is not on the page');

    await table.getByRole('button', { name: 'Delete provider pooled' }).click();
    await page.getByRole('dialog', { name: 'Delete the provider pooled?' }).getByRole('button', { name: 'Delete provider' }).click();
    await table.getByRole('row', { name: /^pooled\b/ }).getByRole('alert').filter({ hasText: 'Deleting pooled failed' }).waitFor();
    await table.getByRole('button', { name: 'Delete provider mirror' }).click();
    await page.getByRole('dialog', { name: 'Delete the provider mirror?' }).getByRole('button', { name: 'Delete provider' }).click();
    await mirror.waitFor({ state: 'detached' });
    const left = (await gw.admin<{ data: Array<{ id: string }> }>('GET', '/providers')).body.data.map((provider) => provider.id).sort();
    assert.deepEqual(left, ['claude-proxy', 'openai-backup', 'pooled']);
  });

  test("the providers page edits a provider's channels: adds one, sets weight, priority and models, keeps the keys it never shows, removes one, shows the API's refusal", async () => {
    const { page } = view;
    const firstKey = 'sk-edited-first-0123456789';
    const secondKey = 'sk-edited-second-0123456789';
    const url = `${gw.simulator.url}/v1`;
    assert.equal((await gw.admin('PUT', '/providers/edited', { type: 'openai', channels: [{ id: 'first', baseUrl: url, apiKey: firstKey }] })).status, 200);
    assert.equal((await gw.admin('PUT', '/models/edited-model', { kind: 'chat', provider: 'edited', upstreamModel: 'gpt-4o-mini' })).status, 200);
    const { key } = await gw.fundedKey();
    /** The Authorization header the vendor got for a chat call through the gateway. */
    const keySentUpstream = async (): Promise<string | undefined> => {
      const reply = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'edited-model', messages: [{ role: 'user', content: 'which key?' }] }),
      });
      assert.equal(reply.status, 200, await reply.text());
      return gw.simulator.lastRequest('/v1/chat/completions')?.headers.authorization;
    };
    const storedChannels = async () => (await gw.admin<{ channels: Array<{ id: string; hasApiKey: boolean; weight: number; priority: number; models: string[] | null }> }>('GET', '/providers/edited')).body.channels;
    const noKeyOnPage = async () => {
      const content = await page.content();
      for (const secret of [firstKey, secondKey]) assert.ok(!content.includes(secret), 'no channel key on the page');
    };

    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Providers', 'Providers');
    const section = page.getByRole('region', { name: 'Channels of edited' });
    const table = section.getByRole('table', { name: 'edited channels and their health' });
    await table.getByRole('row', { name: /^first\b/ }).waitFor();
    const form = page.getByRole('form', { name: 'Edit channels of edited' });
    const rowsOf = async () => Promise.all((await table.locator('tbody tr').all()).map(async (row) => (await cellsOf(row)).slice(0, 6)));

    // A second channel joins; the first gets a weight and a priority, its key field stays empty.
    await section.getByRole('button', { name: 'Edit channels of edited' }).click();
    const first = form.getByRole('group', { name: 'Channel first' });
    const focused = (locator: Locator): Promise<boolean> => locator.evaluate((element) => element === document.activeElement);
    assert.ok(await focused(first.getByLabel('Base URL')), 'the first field that can change has the focus');
    assert.equal(await first.getByLabel('Channel id').inputValue(), 'first');
    assert.equal(await first.getByLabel('Channel id').isEditable(), false, 'a stored channel keeps its id (its key belongs to it)');
    assert.equal(await first.getByLabel('API key').inputValue(), '', 'the key is never filled in');
    assert.equal(await form.getByRole('button', { name: 'Remove channel first' }).isDisabled(), true, 'the last channel cannot be removed');
    await first.getByLabel('Weight').fill('2');
    await first.getByLabel('Priority').fill('1');
    await form.getByRole('button', { name: 'Add a channel' }).click();
    const added = form.getByRole('group', { name: 'Channel 2 (new)' });
    await added.getByLabel('Channel id').fill('second');
    await added.getByLabel('Base URL').fill(url);
    await added.getByLabel('API key').fill(secondKey);
    await added.getByLabel('Weight').fill('3');
    await added.getByLabel('Models').fill('edited-model, gpt-4o-mini');
    await form.getByRole('button', { name: 'Save channels' }).click();
    await section.getByRole('status').filter({ hasText: 'The channels of edited were saved: 2 channels.' }).waitFor();
    await table.getByRole('row', { name: /^second\b/ }).waitFor();
    assert.deepEqual(await rowsOf(), [
      ['first', url, 'set', '2', '1', 'all'],
      ['second', url, 'set', '3', '0', 'edited-model, gpt-4o-mini'],
    ]);
    assert.deepEqual(
      (await storedChannels()).map((channel) => [channel.id, channel.hasApiKey, channel.weight, channel.priority, channel.models]),
      [['first', true, 2, 1, null], ['second', true, 3, 0, ['edited-model', 'gpt-4o-mini']]],
      'the first channel kept its key, the second has the one typed',
    );
    assert.equal(await form.count(), 0, 'the form closed');
    await noKeyOnPage();
    assert.equal(await keySentUpstream(), `Bearer ${firstKey}`, 'the higher-priority channel still calls the vendor with its kept key');

    // The first channel goes; the second keeps its key.
    await section.getByRole('button', { name: 'Edit channels of edited' }).click();
    await form.getByRole('button', { name: 'Remove channel first' }).click();
    assert.equal(await form.getByRole('group', { name: 'Channel first' }).count(), 0);
    await form.getByRole('button', { name: 'Save channels' }).click();
    await section.getByRole('status').filter({ hasText: 'The channels of edited were saved: 1 channel.' }).waitFor();
    await table.getByRole('row', { name: /^first\b/ }).waitFor({ state: 'detached' });
    assert.deepEqual(await rowsOf(), [['second', url, 'set', '3', '0', 'edited-model, gpt-4o-mini']]);
    assert.equal(await keySentUpstream(), `Bearer ${secondKey}`);

    // Bad input: the admin API's 400 shows by the form, which stays open with what was typed; nothing is stored.
    await section.getByRole('button', { name: 'Edit channels of edited' }).click();
    await form.getByRole('button', { name: 'Add a channel' }).click();
    const duplicate = form.getByRole('group', { name: 'Channel 2 (new)' });
    await duplicate.getByLabel('Channel id').fill('second');
    await duplicate.getByLabel('Base URL').fill(url);
    await form.getByRole('button', { name: 'Save channels' }).click();
    await section.getByRole('alert').filter({ hasText: 'Saving the channels of edited failed: channels: channel ids must be unique (400)' }).waitFor();
    await duplicate.getByLabel('Channel id').fill('third');
    await duplicate.getByLabel('Base URL').fill('not a url');
    await form.getByRole('button', { name: 'Save channels' }).click();
    await section.getByRole('alert').filter({ hasText: /Saving the channels of edited failed: channels\[1\]\.baseUrl: .+ \(400\)/ }).waitFor();
    assert.equal(await duplicate.getByLabel('Base URL').getAttribute('aria-invalid'), 'true', 'the field the API names is marked');
    await form.getByRole('button', { name: 'Cancel' }).click();
    assert.ok(await focused(section.getByRole('button', { name: 'Edit channels of edited' })), 'focus goes back to the button');
    assert.deepEqual((await storedChannels()).map((channel) => channel.id), ['second']);

    // "Remove the stored key" sends null.
    await section.getByRole('button', { name: 'Edit channels of edited' }).click();
    await form.getByRole('group', { name: 'Channel second' }).getByLabel('Remove the stored key').check();
    await form.getByRole('button', { name: 'Save channels' }).click();
    await table.getByRole('row', { name: /^second\b/ }).getByRole('cell', { name: 'not set', exact: true }).waitFor();
    assert.deepEqual((await storedChannels()).map((channel) => [channel.id, channel.hasApiKey]), [['second', false]]);
    await noKeyOnPage();
  });

  test('the audit log lists these actions by the operator, filtered by actor and by action', async () => {
    const { page } = view;
    await page.goto(`${gw.url}/console/admin/users`);
    await openOperatorPage(page, 'Audit log', 'Audit log');
    await page.getByLabel('Actor id').fill(operator.userId);
    await page.getByRole('button', { name: 'Filter' }).click();
    const table = page.getByRole('table', { name: 'Matching actions, newest first' });
    await table.getByRole('row').nth(1).waitFor();
    const shown = new Set<string>();
    for (;;) {
      const actions = await table.locator('tbody tr td:nth-child(3)').allTextContents();
      actions.forEach((action) => shown.add(action.trim()));
      const more = page.getByRole('button', { name: 'Load more' });
      if ((await more.count()) === 0) break;
      await more.click();
      await page.waitForLoadState('networkidle');
    }
    for (const action of ['balance.credit', 'balance.debit', 'key.update', 'key.revoke', 'voucher.create', 'delivery.retry']) {
      assert.ok(shown.has(action), `${action} is listed: ${[...shown].join(', ')}`);
    }
    const api = await gw.admin<{ data: AuditRow[] }>('GET', `/audit?actorId=${operator.userId}&limit=100`);
    assert.ok(api.body.data.every((entry) => entry.actor.type === 'operator'));
    assert.deepEqual(new Set(api.body.data.map((entry) => entry.action)), shown, 'the page shows what the admin API has');

    await page.getByLabel('Action').fill('delivery.retry');
    await page.getByRole('button', { name: 'Filter' }).click();
    const retry = table.getByRole('row').filter({ hasText: 'delivery.retry' });
    await retry.waitFor();
    assert.equal(await table.locator('tbody tr').count(), 1);
    assert.match((await cellsOf(retry))[1]!, new RegExp(`^operator ${operator.userId}$`));
  });

  test('at 375 px wide the operator pages fit the screen; every page request stayed on the gateway', async () => {
    const narrow = await openPage(browser, { width: 375 });
    await signInThroughForm(narrow.page, gw.url, operator);
    const paths = ['users', `users/${operator.userId}`, 'orgs', 'keys', 'models', 'providers', 'vouchers', 'deliveries', 'audit'].map((path) => `/console/admin/${path}`);
    for (const path of paths) {
      await narrow.page.goto(`${gw.url}${path}`);
      await narrow.page.getByRole('heading', { level: 1 }).waitFor();
      await narrow.page.waitForLoadState('networkidle');
      await narrow.page.getByRole('table').first().waitFor();
      const width = await narrow.page.evaluate(() => document.scrollingElement!.scrollWidth);
      assert.ok(width <= 375, `${path} is ${width} px wide`);
    }
    await narrow.context.close();
    const all = [...view.requests, ...narrow.requests];
    assert.deepEqual(foreignRequests(all, gw.url), []);
    assert.deepEqual([...view.problems, ...narrow.problems], []);
  });
});
