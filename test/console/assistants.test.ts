import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { ManualClock } from '../../src/lib/clock.ts';
import { createAssistant, newMention, simulatedReply } from '../helpers/assistants-e2e.ts';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, type RecordedPage, startTogether } from '../helpers/browser.ts';
import { micros, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, signIn, type Customer, type SignedInClient } from '../helpers/management.ts';

interface AssistantView {
  id: string;
  mention: string;
  title: string;
  subtitle: string;
  description: string;
  instruction: string;
  modelId: string;
  temperature: string;
  mcp: unknown[];
  access: { isPrivate: boolean };
}

/** DESIGN §11's assistant pages in real Chromium: the storefront's catalog search, `/a/:mention` with its chat, `/console/assistants`. */
describe('assistants in the console and on their pages, in Chromium', () => {
  let gw: TestGateway;
  let browser: Browser;
  let ada: Customer;
  let adaApi: SignedInClient;
  let visitor: RecordedPage;
  let view: RecordedPage;
  /** Grace's public assistant (made with her API key) and a private one. */
  let published: { mention: string; title: string };
  let hidden: { mention: string };
  const word = `quokka${Date.now().toString(36)}`;
  const mine = newMention('helper');

  before(async () => {
    [gw, browser] = await startTogether(startTestGateway({ clock: new ManualClock(Date.now()) }), launchBrowser());
    ada = await createCustomer(gw, { balance: '10.00', name: 'Ada' });
    adaApi = await signIn(gw, ada);
    const grace = await gw.admin<{ id: string }>('POST', '/users', { name: 'Grace Hopper', balance: '5.00' });
    const { key } = await gw.fundedKey({ userId: grace.body.id });
    published = { mention: `${word}-guide`, title: 'Quokka guide' };
    await createAssistant(gw, key, { mention: published.mention, title: published.title, subtitle: 'All about quokkas', description: 'Answers questions about small marsupials.', instruction: 'secret instruction', modelId: 'gpt-4o-mini', access: { isPrivate: false } });
    hidden = { mention: `${word}-hidden` };
    await createAssistant(gw, key, { mention: hidden.mention, title: 'Quokka secret', modelId: 'gpt-4o-mini' });
    [visitor, view] = await Promise.all([openPage(browser), openPage(browser)]);
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
  });

  test('signed out, the storefront’s search finds a public assistant (never a private one) and opens its page: the card and “Sign in to chat”', async () => {
    const { page } = visitor;
    await page.goto(gw.url);
    await page.getByRole('heading', { name: 'Assistants', level: 2 }).waitFor();
    await page.getByLabel('Find an assistant').fill(word);
    await page.getByRole('button', { name: 'Search assistants' }).click();
    const results = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Author' }) });
    await results.locator('caption', { hasText: `1 assistant for “${word}”` }).waitFor();
    const row = results.getByRole('row', { name: new RegExp(published.title) });
    assert.deepEqual((await row.getByRole('cell').allTextContents()).slice(1), ['Grace Hopper', 'gpt-4o-mini', 'Free', '0']);
    assert.equal(await results.getByText('Quokka secret').count(), 0, 'a private assistant is not in the catalog');

    await row.getByRole('link', { name: published.title }).click();
    await page.waitForURL(`${gw.url}/a/${published.mention}`);
    await page.getByRole('heading', { name: published.title, level: 1 }).waitFor();
    await page.getByText('All about quokkas').waitFor();
    await page.getByText('Answers questions about small marsupials.').waitFor();
    assert.equal(await page.getByText('Author').locator('xpath=following-sibling::dd').textContent(), 'Grace Hopper');
    assert.equal(await page.getByText('Code', { exact: true }).locator('xpath=following-sibling::dd').textContent(), `@${published.mention}`);
    assert.equal((await page.content()).includes('secret instruction'), false, 'the page never shows the instruction');
    assert.equal(await page.getByLabel('Message').count(), 0, 'no chat for a signed-out visitor');
    await page.getByRole('link', { name: 'Sign in to chat' }).click();
    await page.waitForURL(/\/login\?next=/);
    assert.equal(new URL(page.url()).searchParams.get('next'), `/a/${published.mention}`);

    await page.goto(`${gw.url}/a/${hidden.mention}`);
    await page.getByRole('heading', { name: 'Assistant not found', level: 1 }).waitFor();
  });

  test('signed in, the console teaches when there are no assistants and creates one with its fields', async () => {
    const { page } = view;
    await signInThroughForm(page, gw.url, ada);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Assistants' }).click();
    await page.getByRole('heading', { name: 'Assistants', level: 1 }).waitFor();
    await page.getByText('No assistants yet.').waitFor();
    assert.match((await page.getByLabel('curl example').textContent()) ?? '', new RegExp(`curl ${gw.url}/v1/assistant/chat`));

    await page.getByLabel(/^Title/).fill('Ada helper');
    await page.getByLabel(/^Code/).fill(mine);
    await page.getByLabel(/^Subtitle/).fill('Analytical engines');
    await page.getByLabel(/^Description/).fill('Explains the analytical engine.');
    await page.getByLabel(/^Instruction/).fill('You are Ada. Answer in one sentence.');
    await page.getByLabel(/^Model/).selectOption('gpt-4o-mini');
    await page.getByLabel(/^Temperature/).fill('0.2');
    await page.getByRole('button', { name: 'Create assistant' }).click();
    await page.getByRole('status').filter({ hasText: `“Ada helper” was created: its page is /a/${mine}.` }).waitFor();
    const row = page.getByRole('row', { name: /Ada helper/ });
    await row.getByRole('link', { name: `/a/${mine}` }).waitFor();
    assert.match((await row.getByRole('cell').allTextContents()).join(' | '), /gpt-4o-mini \| Private/);

    const listed = await adaApi.call<{ data: Array<{ id: string }> }>('GET', '/assistants');
    const saved = await adaApi.call<AssistantView>('GET', `/assistants/${listed.body.data[0]!.id}`);
    assert.equal(saved.body.mention, mine);
    assert.equal(saved.body.subtitle, 'Analytical engines');
    assert.equal(saved.body.instruction, 'You are Ada. Answer in one sentence.');
    assert.equal(saved.body.temperature, '0.2');
    assert.equal(saved.body.access.isPrivate, true, 'new assistants start private');
  });

  test('its page answers a chat message with a streamed reply, charged to Ada’s balance as the cost under it says', async () => {
    const { page } = view;
    await page.getByRole('row', { name: /Ada helper/ }).getByRole('link', { name: `/a/${mine}` }).click();
    await page.waitForURL(`${gw.url}/a/${mine}`);
    await page.getByRole('heading', { name: 'Ada helper', level: 1 }).waitFor();
    await page.getByText('This is your assistant').waitFor();
    const before = micros(await gw.balance({ userId: ada.userId }));

    const message = 'What did the analytical engine compute?';
    await page.getByLabel('Message').fill(message);
    await page.getByRole('button', { name: 'Send' }).click();
    const conversation = page.getByRole('log', { name: 'Conversation' });
    const reply = simulatedReply(gw, message);
    await conversation.getByText(reply, { exact: true }).waitFor();
    const lines = conversation.getByRole('listitem');
    assert.equal(await lines.count(), 2);
    assert.equal(await lines.nth(0).getByRole('paragraph').textContent(), message);
    assert.equal(await lines.nth(0).getByRole('strong').textContent(), 'You');
    assert.equal(await lines.nth(1).getByRole('strong').textContent(), 'Ada helper');
    const costText = (await conversation.getByText(/^Cost /).textContent())!.replace('Cost ', '');
    const charged = before - micros(await gw.balance({ userId: ada.userId }));
    assert.ok(charged > 0n);
    assert.equal(micros(costText), charged, `the page says ${costText}; the balance dropped by exactly that`);
    assert.equal(await page.getByLabel('Message').inputValue(), '', 'the box is cleared for the next message');

    const system = gw.simulator.requests.filter((request) => request.path === '/v1/chat/completions').at(-1)!;
    assert.equal(((system.json as { messages: Array<{ content: unknown }> }).messages[0]!.content), 'You are Ada. Answer in one sentence.', 'the saved instruction led the chat');
  });

  test('editing changes the fields it shows; a bad JSON field is refused on the form; making it public lists it in the catalog', async () => {
    const { page } = view;
    await page.goto(`${gw.url}/console/assistants`);
    await page.getByRole('button', { name: 'Edit Ada helper' }).click();
    await page.getByRole('heading', { name: 'Edit “Ada helper”' }).waitFor();
    assert.equal(await page.getByLabel(/^Instruction/).inputValue(), 'You are Ada. Answer in one sentence.', 'the form holds the saved instruction');
    await page.getByLabel(/^Subtitle/).fill('Notes on the engine');
    await page.getByLabel(/^Private/).uncheck();
    await page.getByLabel(/^MCP servers/).fill('[{"url": ');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('alert').filter({ hasText: 'MCP servers: not valid JSON' }).waitFor();
    await page.getByLabel(/^MCP servers/).fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: '“Ada helper” was saved.' }).waitFor();
    await page.getByRole('row', { name: /Ada helper/ }).getByRole('cell', { name: 'Public' }).waitFor();

    const found = await fetch(`${gw.url}/api/v1/assistants/search?query=@${mine}`);
    const cards = (await found.json()) as { data: Array<{ subtitle: string; access: { isPrivate: boolean } }> };
    assert.equal(cards.data.length, 1, 'public now: the catalog lists it for everyone');
    assert.equal(cards.data[0]!.subtitle, 'Notes on the engine');
  });

  test('delete asks first; once confirmed the assistant and its page are gone', async () => {
    const { page } = view;
    await page.getByRole('button', { name: 'Delete Ada helper' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete the assistant “Ada helper”?' });
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('row', { name: /Ada helper/ }).waitFor();
    assert.equal((await adaApi.call<{ total: number }>('GET', '/assistants')).body.total, 1, 'cancel keeps it');

    await page.getByRole('button', { name: 'Delete Ada helper' }).click();
    await dialog.getByRole('button', { name: 'Delete assistant' }).click();
    await page.getByRole('status').filter({ hasText: '“Ada helper” was deleted.' }).waitFor();
    await page.getByText('No assistants yet.').waitFor();
    assert.equal((await adaApi.call<{ total: number }>('GET', '/assistants')).body.total, 0);
    await page.goto(`${gw.url}/a/${mine}`);
    await page.getByRole('heading', { name: 'Assistant not found', level: 1 }).waitFor();
  });

  test('a signed-in visitor likes an assistant and installs a paid one after confirming the price, charged once', async () => {
    const { page } = view;
    const maker = await gw.admin<{ id: string }>('POST', '/users', { name: 'Maker', balance: '1.00' });
    const { key } = await gw.fundedKey({ userId: maker.body.id });
    const paid = { mention: `${word}-paid`, title: 'Quokka pro' };
    await createAssistant(gw, key, { mention: paid.mention, title: paid.title, modelId: 'gpt-4o-mini', access: { isPrivate: false, isFree: false, installPrice: '0.50' } });
    await page.goto(`${gw.url}/a/${paid.mention}`);
    await page.getByRole('heading', { name: paid.title, level: 1 }).waitFor();
    const likes = page.getByText('Likes', { exact: true }).locator('xpath=following-sibling::dd');
    assert.equal(await likes.textContent(), '0');

    const actions = page.getByRole('region', { name: 'Like and install' });
    await actions.getByRole('button', { name: 'Like' }).click();
    await actions.getByRole('status').filter({ hasText: `You like ${paid.title}.` }).waitFor();
    await page.getByText('Likes', { exact: true }).locator('xpath=following-sibling::dd', { hasText: '1' }).waitFor();
    await actions.getByText('Liked', { exact: true }).waitFor();
    assert.equal(await actions.getByRole('button', { name: 'Like' }).count(), 0, 'liked once; the page says so');
    await page.reload();
    await page.getByRole('region', { name: 'Like and install' }).getByText('Liked', { exact: true }).waitFor();

    const before = micros(await gw.balance({ userId: ada.userId }));
    await actions.getByRole('button', { name: 'Install for 0.50' }).click();
    const dialog = page.getByRole('dialog', { name: `Install ${paid.title}?` });
    await dialog.getByText(`Installing ${paid.title} charges 0.50 to your balance, once.`).waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(micros(await gw.balance({ userId: ada.userId })), before, 'cancel charges nothing');
    await actions.getByRole('button', { name: 'Install for 0.50' }).click();
    await dialog.getByRole('button', { name: 'Pay 0.50 and install' }).click();
    await actions.getByRole('status').filter({ hasText: `${paid.title} is installed; 0.50 was charged to your balance.` }).waitFor();
    await actions.getByText('Installed', { exact: true }).waitFor();
    assert.equal(await actions.getByRole('button', { name: /^Install/ }).count(), 0, 'nothing more to install');
    assert.equal(before - micros(await gw.balance({ userId: ada.userId })), micros('0.50'));
  });

  test('at 375 px wide the assistant pages fit the screen; every request stayed on the gateway', async () => {
    const narrow = await openPage(browser, { width: 375 });
    await signInThroughForm(narrow.page, gw.url, ada);
    for (const path of ['/', `/a/${published.mention}`, '/console/assistants']) {
      await narrow.page.goto(`${gw.url}${path}`);
      await narrow.page.getByRole('heading', { level: 1 }).first().waitFor();
      if (path.startsWith('/a/')) await narrow.page.getByLabel('Message').waitFor();
      await narrow.page.waitForLoadState('networkidle');
      const width = await narrow.page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(width <= 375, `${path} is ${width} px wide`);
    }
    await narrow.context.close();
    const all = [...visitor.requests, ...view.requests, ...narrow.requests];
    assert.deepEqual(foreignRequests(all, gw.url), []);
    assert.deepEqual([...visitor.problems, ...view.problems, ...narrow.problems], []);
  });
});
