import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { foreignRequests, launchBrowser, openPage, signInThroughForm, startTogether } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { createCustomer, signIn } from '../helpers/management.ts';
import { startStripeStandIn, type StripeStandIn } from '../helpers/stripe-stand-in.ts';

interface PaymentView {
  id: string;
  amount: string;
  status: string;
}

/** /console/billing's "Top up by card" and "Auto-recharge" in Chromium, against the Stripe stand-in; and their absence when card payments are off. */
describe('card top-ups on the billing page, in Chromium', () => {
  let gw: TestGateway;
  let plain: TestGateway;
  let standIn: StripeStandIn;
  let browser: Browser;

  before(async () => {
    standIn = await startStripeStandIn();
    [gw, plain, browser] = await startTogether(
      startTestGateway({ config: { stripe: { secretKey: 'sk_test_tollgate', webhookSecret: 'whsec_test_tollgate', apiUrl: standIn.url } } }),
      startTestGateway(),
      launchBrowser(),
    );
    standIn.deliverTo(`${gw.url}/api/v1/payments/stripe/webhook`, 'whsec_test_tollgate');
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await plain?.close();
    await standIn?.close();
  });

  test('the customer enters an amount, is sent to the checkout URL the API answered, and the payment is listed as pending', async () => {
    const customer = await createCustomer(gw);
    const { page, requests, problems } = await openPage(browser);
    const checkoutAnswers: string[] = [];
    // The API's answer passes through unchanged; only its url is noted.
    await page.route(`${gw.url}/api/v1/payments/checkout`, async (route) => {
      const response = await route.fetch();
      checkoutAnswers.push(((await response.json()) as { url: string }).url);
      await route.fulfill({ response });
    });
    // Stripe's page is never reached: the browser's visit to it is answered here, so nothing leaves 127.0.0.1.
    const visited: string[] = [];
    await page.route('https://checkout.stripe.com/**', (route) => {
      visited.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Stripe Checkout stand-in</title><h1>Pay</h1>' });
    });
    await signInThroughForm(page, gw.url, customer);
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Top up by card' }).waitFor();
    await page.getByText('From 1.00 to 10000.00 USD').waitFor();

    await page.getByLabel('Amount (USD)').fill('0.50');
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.getByRole('alert').filter({ hasText: 'enter an amount from 1.00 to 10000.00 USD' }).waitFor();
    assert.equal(standIn.sessions.length, 0, 'an amount below the minimum never reaches Stripe');

    await page.getByLabel('Amount (USD)').fill('25.00');
    await page.getByRole('button', { name: 'Pay by card' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//);
    assert.equal(checkoutAnswers.length, 1);
    assert.equal(page.url(), checkoutAnswers[0], 'the browser went to the url the API answered');
    assert.deepEqual(visited, checkoutAnswers);
    assert.equal(standIn.sessions.length, 1);

    const api = await signIn(gw, customer);
    const listed = await api.call<{ data: PaymentView[] }>('GET', '/payments');
    assert.deepEqual(listed.body.data.map((payment) => [payment.amount, payment.status]), [['25.00', 'pending']]);

    await page.goto(`${gw.url}/console/billing?payment=${listed.body.data[0]!.id}&cancelled=1`);
    await page.getByRole('status').filter({ hasText: 'The card payment was cancelled' }).waitFor();
    const table = page.getByRole('table', { name: /Card payments/ });
    // The payments list loads after the page: wait for its row before reading it.
    await table.getByRole('cell', { name: 'pending', exact: true }).waitFor();
    const row = table.getByRole('row').nth(1);
    const cells = await row.getByRole('cell').allTextContents();
    assert.ok(cells.includes('25.00 USD') && cells.includes('pending'), JSON.stringify(cells));

    assert.deepEqual(foreignRequests(requests, gw.url).filter((url) => !url.startsWith('https://checkout.stripe.com/')), []);
    assert.deepEqual(problems, []);
  });

  test('at 375 px the customer saves a card on Stripe, turns auto-recharge on with a threshold and an amount, and sees a declined charge', async () => {
    const customer = await createCustomer(gw, { balance: '10.00' });
    const { page, requests, problems } = await openPage(browser, { width: 375 });
    const visited: string[] = [];
    await page.route('https://checkout.stripe.com/**', (route) => {
      visited.push(route.request().url());
      return route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Stripe Checkout stand-in</title><h1>Save a card</h1>' });
    });
    await signInThroughForm(page, gw.url, customer);
    await page.getByRole('link', { name: 'Billing' }).click();
    const section = page.getByRole('region', { name: 'Auto-recharge' });
    await section.getByText('No card saved.').waitFor();
    await section.getByText('Off: the balance is never topped up by itself.').waitFor();
    assert.equal(await section.getByLabel('Recharge automatically').isDisabled(), true, 'nothing to charge before a card is saved');

    await section.getByRole('button', { name: 'Save a card' }).click();
    await page.waitForURL(/^https:\/\/checkout\.stripe\.com\//);
    const setup = standIn.sessions.at(-1)!;
    assert.equal(setup.fields.mode, 'setup');
    assert.deepEqual(visited, [`https://checkout.stripe.com/c/pay/${setup.id}`]);
    // The customer enters the card on Stripe's page; Stripe tells the gateway and sends the browser back.
    const saved = await standIn.completeSetup(setup.id, { brand: 'visa', last4: '4242' });
    assert.equal(saved.body.result, 'card_saved');
    await page.goto(`${gw.url}/console/billing?card=saved`);
    await page.getByRole('status').filter({ hasText: 'Card saved.' }).waitFor();
    await section.getByText('Saved card: visa ending in 4242, expires 12/2030.').waitFor();

    await section.getByLabel('Recharge automatically').check();
    await section.getByLabel('When the balance falls below (USD)').fill('8.00');
    await section.getByLabel('Add (USD)').fill('0.50');
    await section.getByRole('button', { name: 'Save auto-recharge' }).click();
    await section.getByRole('alert').filter({ hasText: 'enter an amount to add from 1.00 to 10000.00 USD' }).waitFor();
    await section.getByLabel('Add (USD)').fill('25.00');
    await section.getByRole('button', { name: 'Save auto-recharge' }).click();
    await section.getByText('On: when a charge takes the balance below 8.00 USD, the saved card is charged 25.00 USD (at most once an hour).').waitFor();
    const api = await signIn(gw, customer);
    const state = await api.call<{ enabled: boolean; threshold: string; amount: string }>('GET', '/payments/auto-recharge');
    assert.deepEqual([state.body.enabled, state.body.threshold, state.body.amount], [true, '8.00', '25.00']);

    // The card is declined when the balance crosses the threshold: the page says so, and auto-recharge stays on.
    standIn.setCard(saved.paymentMethod, { decline: 'insufficient_funds' });
    assert.equal((await gw.admin('POST', '/balance', { userId: customer.userId, amount: '-3.00' })).status, 200);
    await gw.app.services.runner.runDue();
    await standIn.idle();
    await page.reload();
    await section.getByRole('alert').filter({ hasText: 'failed: Your card has insufficient funds.' }).waitFor();
    await section.getByText(/^On: when a charge takes the balance below 8\.00 USD/).waitFor();
    const payments = page.getByRole('table', { name: /Card payments/ });
    await payments.getByRole('cell', { name: 'auto-recharge', exact: true }).waitFor();
    await page.waitForLoadState('networkidle');
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 375, `the billing page is ${width} px wide`);
    assert.deepEqual(foreignRequests(requests, gw.url).filter((url) => !url.startsWith('https://checkout.stripe.com/')), []);
    assert.deepEqual(problems, []);
  });

  test('without card payments configured the billing page has no card top-up', async () => {
    const customer = await createCustomer(plain);
    const { page, problems } = await openPage(browser);
    await signInThroughForm(page, plain.url, customer);
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Redeem a voucher' }).waitFor();
    await page.getByRole('table').first().waitFor();
    assert.equal(await page.getByRole('heading', { name: 'Top up by card' }).count(), 0);
    assert.equal(await page.getByLabel('Amount (USD)').count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Card payments' }).count(), 0);
    assert.equal(await page.getByRole('heading', { name: 'Auto-recharge' }).count(), 0);
    assert.deepEqual(problems, []);
  });
});
