import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { createAssistant, newMention } from '../helpers/assistants-e2e.ts';
import { startChatService, type FakeChatService } from '../helpers/chat-service.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, signIn, type Customer, type SignedInClient } from '../helpers/management.ts';

interface OrgView {
  promptCaching: boolean;
  members: Array<{ id: string; role: string }>;
}

/** DESIGN §11 in real Chromium: the org API tab's prompt-caching switch (owners and admins only) and a bot's webhook URL. */
describe('the console for an organisation and its bots, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let orgId: string;
  const people: Record<'owner' | 'admin' | 'member', { customer: Customer; api: SignedInClient; view: RecordedPage }> = {} as never;
  let chat: FakeChatService;

  before(async () => {
    [gw, browser, chat] = await startTogether(startTestGateway(), launchBrowser(), startChatService());
    for (const role of ['owner', 'admin', 'member'] as const) {
      const customer = await createCustomer(gw, { name: `the ${role}` });
      people[role] = { customer, api: await signIn(gw, customer), view: await openPage(browser) };
    }
    const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: people.owner.customer.userId, balance: '20.00' });
    assert.equal(org.status, 200, JSON.stringify(org.body));
    orgId = org.body.id;
    for (const role of ['admin', 'member'] as const) {
      assert.equal((await gw.admin('POST', `/orgs/${orgId}/members`, { userId: people[role].customer.userId, role })).status, 200);
    }
  });
  after(async () => {
    await browser?.close();
    await chat?.close();
    await gw?.close();
  });

  const openApiTab = async (role: 'owner' | 'admin' | 'member') => {
    const { page } = people[role].view;
    await signInThroughForm(page, gw.url, people[role].customer);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Acme' }).click();
    await page.getByRole('heading', { name: 'Acme', level: 1 }).waitFor();
    await page.getByRole('row', { name: /the member/ }).waitFor();
    await page.getByRole('navigation', { name: 'Organisation' }).getByRole('link', { name: 'API' }).click();
    const toggle = page.getByRole('switch', { name: 'Prompt caching' });
    await toggle.waitFor();
    return { page, toggle };
  };

  test('the owner switches prompt caching on in the API tab, and the API shows it on', async () => {
    const { page, toggle } = await openApiTab('owner');
    assert.equal(await toggle.isChecked(), false);
    await toggle.click();
    await page.getByRole('status').filter({ hasText: 'Saved: prompt caching is on' }).waitFor();
    assert.equal(await toggle.isChecked(), true);
    assert.equal((await people.owner.api.call<OrgView>('GET', `/orgs/${orgId}`)).body.promptCaching, true);
  });

  test('a member sees the switch disabled, with the reason', async () => {
    const { page, toggle } = await openApiTab('member');
    assert.equal(await toggle.isDisabled(), true);
    assert.equal(await toggle.isChecked(), true, 'the member sees the current setting');
    const reason = await page.getByText('Only the organisation\'s owners and admins can change this').textContent();
    assert.match(reason ?? '', /you are a member/);
    assert.match((await toggle.getAttribute('aria-describedby')) ?? '', /.+/, 'the reason describes the switch');
  });

  test('an admin demoted while the page is open gets the API\'s 403 shown beside the switch, and nothing changes', async () => {
    const { page, toggle } = await openApiTab('admin');
    assert.equal(await toggle.isDisabled(), false);
    const demoted = await people.owner.api.call('PATCH', `/orgs/${orgId}/members/${people.admin.customer.userId}`, { role: 'member' });
    assert.equal(demoted.status, 200, JSON.stringify(demoted.body));
    await toggle.click();
    const alert = page.getByRole('alert').filter({ hasText: 'Changing prompt caching failed' });
    await alert.waitFor();
    assert.match((await alert.textContent()) ?? '', /\(403\)/);
    assert.equal((await people.owner.api.call<OrgView>('GET', `/orgs/${orgId}`)).body.promptCaching, true);
  });

  test('a bot is created with its token shown once; its webhook URL set on the page receives the reply to a chat message', async () => {
    const { page, requests, problems } = people.owner.view;
    const { key } = await gw.fundedKey({ userId: people.owner.customer.userId });
    const assistant = await createAssistant(gw, key, { mention: newMention('console'), title: 'Support', instruction: 'Be kind.', modelId: 'gpt-4o-mini' });

    await page.getByRole('link', { name: 'Bots' }).click();
    await page.getByText('No bots yet.').waitFor();
    await page.getByLabel('Bot name').fill('Shop bot');
    await page.getByLabel('Assistant id').fill(String(assistant.id));
    await page.getByRole('button', { name: 'Create bot' }).click();
    const token = await page.getByLabel('Bot token').inputValue();
    assert.match(token, /^tgb-/);
    await page.getByRole('button', { name: 'I have copied it' }).click();

    await page.getByLabel('Webhook URL of Shop bot').fill(chat.url);
    await page.getByRole('button', { name: 'Save webhook URL' }).click();
    await page.getByRole('status').filter({ hasText: 'Webhook URL saved.' }).waitFor();
    const bots = await people.owner.api.call<{ data: Array<{ id: string; webhookUrl: string | null }> }>('GET', '/bots');
    assert.deepEqual(bots.body.data.map((bot) => bot.webhookUrl), [chat.url]);
    assert.equal((await page.content()).includes(token), false, 'the token is not shown again');

    const chatId = `chat-${randomUUID()}`;
    const message = { id: randomUUID(), site_id: '1', client_id: 'client-1', chat_id: chatId, agents_online: false, message: { type: 'TEXT', text: 'Do you deliver?', timestamp: Math.floor(gw.clock.now() / 1000) }, event: 'CLIENT_MESSAGE' };
    const posted = await fetch(`${gw.url}/api/bot`, { method: 'POST', headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(message) });
    assert.equal(posted.status, 200);
    await gw.app.services.runner.runDue();
    assert.deepEqual(chat.events('BOT_MESSAGE').map((event) => event.chat_id), [chatId], 'the reply reached the URL set on the page');

    const all = Object.values(people).flatMap((person) => person.view.requests);
    assert.deepEqual(foreignRequests([...all, ...requests], gw.url), []);
    assert.deepEqual([...Object.values(people).flatMap((person) => person.view.problems), ...problems], []);
  });
});
