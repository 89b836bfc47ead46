import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Stripe from 'stripe';
import { parseMoney, formatMoney } from '../src/lib/money.ts';
import { errorA, ledger, userWithOrg } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { createCustomer, signIn, type SignedInClient } from './helpers/management.ts';
import { completedSession, startStripeStandIn, type StripeStandIn } from './helpers/stripe-stand-in.ts';

const WEBHOOK_SECRET = 'whsec_test_tollgate';
const stripe = new Stripe('sk_test_for_signing_only');

interface PaymentView {
  id: string;
  sessionId: string;
  url: string;
  amount: string;
  status: string;
  account: { type: string; id: string };
}

/** The answer has the status and a shape A error body. */
function refused(answer: { status: number; body: unknown }, status: number): ReturnType<typeof errorA> {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  return errorA(answer.body);
}

/** An event as Stripe delivers it: the JSON body and its `Stripe-Signature` made with the package's own test helper. */
function signedEvent(type: string, object: Record<string, unknown>, secret = WEBHOOK_SECRET): { payload: string; signature: string } {
  const payload = JSON.stringify({ id: `evt_${Math.random().toString(36).slice(2)}`, object: 'event', type, api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), data: { object }, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null } });
  return { payload, signature: stripe.webhooks.generateTestHeaderString({ payload, secret }) };
}

const refundedCharge = (payment: PaymentView, refundedMinor: number) => ({
  id: `ch_${payment.id}`,
  object: 'charge',
  amount: 0,
  amount_refunded: refundedMinor,
  currency: 'usd',
  payment_intent: `pi_${payment.id}`,
  metadata: {},
  refunded: true,
});

const sumOf = (rows: ReadonlyArray<{ amount: string }>): string => formatMoney(rows.reduce((total, row) => total + parseMoney(row.amount)!, 0n));

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`card top-ups with Stripe (${database})`, () => {
    let gw: TestGateway;
    let standIn: StripeStandIn;
    before(async () => {
      standIn = await startStripeStandIn();
      gw = await startTestGateway({
        database,
        config: { stripe: { secretKey: 'sk_test_tollgate', webhookSecret: WEBHOOK_SECRET, apiUrl: standIn.url } },
      });
    });
    after(async () => {
      await gw?.close();
      await standIn?.close();
    });

    const deliver = async (event: { payload: string; signature: string | undefined }) => {
      const response = await fetch(`${gw.url}/api/v1/payments/stripe/webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', ...(event.signature !== undefined ? { 'stripe-signature': event.signature } : {}) },
        body: event.payload,
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };

    const checkout = async (client: SignedInClient, body: Record<string, unknown>) => client.call<PaymentView>('POST', '/payments/checkout', body);

    test('a checkout opens a Stripe session for the amount; the paid event credits it once, however often and concurrently it arrives', async () => {
      const customer = await createCustomer(gw, { balance: '2.00' });
      const client = await signIn(gw, customer);
      const options = await client.call<{ enabled: boolean; currency: string; min: string; max: string }>('GET', '/payments/options');
      assert.deepEqual(options.body, { enabled: true, currency: 'USD', min: '1.00', max: '10000.00' });

      const started = await checkout(client, { amount: '25.00' });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const payment = started.body;
      assert.equal(payment.status, 'pending');
      assert.match(payment.url, /^https:\/\/checkout\.stripe\.com\//);
      const sent = standIn.sessions.find((session) => session.id === payment.sessionId)!;
      assert.equal(sent.fields['line_items[0][price_data][unit_amount]'], '2500', 'minor units');
      assert.equal(sent.fields['line_items[0][price_data][currency]'], 'usd');
      assert.equal(sent.fields.client_reference_id, payment.id);
      assert.equal(sent.fields.mode, 'payment');
      assert.ok(sent.fields.success_url!.endsWith(`/console/billing?payment=${payment.id}`), 'Checkout returns the customer to the billing page');
      assert.equal(sent.authorization, 'Bearer sk_test_tollgate');
      assert.equal(await gw.balance({ userId: customer.userId }), '2.00', 'nothing is credited before payment');

      const event = signedEvent('checkout.session.completed', completedSession(payment, 2500));
      const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(event)));
      for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answers.filter((answer) => answer.body.result === 'credited').length, 1, 'one delivery credits');
      assert.equal((await deliver(event)).body.result, 'ignored', 'a later redelivery changes nothing');

      assert.equal(await gw.balance({ userId: customer.userId }), '27.00');
      const rows = await ledger(gw, { userId: customer.userId });
      const credits = rows.filter((row) => row.description.includes(payment.sessionId));
      assert.equal(credits.length, 1);
      assert.equal(credits[0]!.amount, '25.00');
      assert.equal(sumOf(rows), '27.00', 'balance = Σ ledger');

      const listed = await client.call<{ data: PaymentView[] }>('GET', '/payments');
      assert.deepEqual(listed.body.data.map((item) => [item.id, item.status]), [[payment.id, 'paid']]);
      const asOperator = await gw.admin<{ data: PaymentView[] }>('GET', `/payments?userId=${customer.userId}`);
      assert.equal(asOperator.body.data[0]!.status, 'paid');
    });

    test('a bad or missing signature is a 400 and credits nothing; an unpaid (async) completion waits for its success event', async () => {
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      const payment = (await checkout(client, { amount: '10.00' })).body;

      const forged = signedEvent('checkout.session.completed', completedSession(payment, 1000), 'whsec_someone_else');
      assert.equal(refused(await deliver(forged), 400).param, 'stripe-signature');
      refused(await deliver({ payload: forged.payload, signature: undefined }), 400);
      const genuine = signedEvent('checkout.session.completed', completedSession(payment, 1000));
      refused(await deliver({ payload: genuine.payload.replace('"amount_total":1000', '"amount_total":9999'), signature: genuine.signature }), 400);
      assert.equal(await gw.balance({ userId: customer.userId }), '0.00');

      const unpaid = signedEvent('checkout.session.completed', completedSession(payment, 1000, { payment_status: 'unpaid' }));
      assert.equal((await deliver(unpaid)).body.result, 'ignored');
      assert.equal(await gw.balance({ userId: customer.userId }), '0.00');
      const succeeded = signedEvent('checkout.session.async_payment_succeeded', completedSession(payment, 1000));
      assert.equal((await deliver(succeeded)).body.result, 'credited');
      assert.equal(await gw.balance({ userId: customer.userId }), '10.00');
    });

    test('refunds debit the refunded part once each (cumulative amount_refunded, late and repeated deliveries); a lost dispute debits once', async () => {
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      const payment = (await checkout(client, { amount: '40.00' })).body;
      await deliver(signedEvent('checkout.session.completed', completedSession(payment, 4000)));
      assert.equal(await gw.balance({ userId: customer.userId }), '40.00');

      const first = signedEvent('charge.refunded', refundedCharge(payment, 1000));
      const answers = await Promise.all([deliver(first), deliver(first), deliver(first)]);
      assert.equal(answers.filter((answer) => answer.body.result === 'debited').length, 1);
      assert.equal(await gw.balance({ userId: customer.userId }), '30.00');
      assert.equal((await deliver(signedEvent('charge.refunded', refundedCharge(payment, 2500)))).body.result, 'debited');
      assert.equal(await gw.balance({ userId: customer.userId }), '15.00', 'the second refund debits only what it adds');
      assert.equal((await deliver(first)).body.result, 'ignored', 'the first event arriving late changes nothing');
      assert.equal(await gw.balance({ userId: customer.userId }), '15.00');

      const dispute = signedEvent('charge.dispute.closed', { id: `dp_${payment.id}`, object: 'dispute', amount: 1500, currency: 'usd', charge: `ch_${payment.id}`, payment_intent: `pi_${payment.id}`, status: 'lost' });
      assert.equal((await deliver(dispute)).body.result, 'debited');
      assert.equal((await deliver(dispute)).body.result, 'ignored');
      assert.equal(await gw.balance({ userId: customer.userId }), '0.00');
      const won = signedEvent('charge.dispute.closed', { id: 'dp_won', object: 'dispute', amount: 1500, currency: 'usd', charge: `ch_${payment.id}`, payment_intent: `pi_${payment.id}`, status: 'won' });
      assert.equal((await deliver(won)).body.result, 'ignored');
      assert.equal(sumOf(await ledger(gw, { userId: customer.userId })), '0.00', 'balance = Σ ledger');
    });

    test('amounts outside the bounds or finer than cents → 400; an org is topped up by its owner or admin, a member gets 403, another org 404', async () => {
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      for (const amount of ['0.50', '10000.01', '12.345', '-5', 'ten']) {
        assert.equal(refused(await checkout(client, { amount }), 400).param, 'amount', amount);
      }
      refused(await checkout(client, { amount: '5.00', extra: true }), 400);
      const sessionsBefore = standIn.sessions.length;
      refused(await client.withoutCsrf('POST', '/payments/checkout', { amount: '5.00' }), 403);
      assert.equal(standIn.sessions.length, sessionsBefore, 'a cookie request without its CSRF token opens no checkout');

      const { userId: ownerId, orgId } = await userWithOrg(gw, { user: '0', org: '0' });
      const owner = await createCustomer(gw, { balance: '0' });
      await gw.admin('POST', `/orgs/${orgId}/members`, { userId: owner.userId, role: 'admin' });
      const member = await createCustomer(gw, { balance: '0' });
      await gw.admin('POST', `/orgs/${orgId}/members`, { userId: member.userId, role: 'member' });
      assert.ok(ownerId);

      const adminClient = await signIn(gw, owner);
      const forOrg = await checkout(adminClient, { amount: '100.00', orgId });
      assert.equal(forOrg.status, 200, JSON.stringify(forOrg.body));
      assert.deepEqual(forOrg.body.account, { type: 'org', id: orgId });
      await deliver(signedEvent('checkout.session.completed', completedSession(forOrg.body, 10000)));
      assert.equal(await gw.balance({ orgId }), '100.00');
      assert.equal(await gw.balance({ userId: owner.userId }), '0.00', 'the org paid in, not its admin');

      refused(await checkout(await signIn(gw, member), { amount: '5.00', orgId }), 403);
      refused(await checkout(client, { amount: '5.00', orgId }), 404);
    });

    test('a vendor hiccup is retried with one idempotency key (one session); a vendor outage is a 502 and no payment', async () => {
      const customer = await createCustomer(gw, { balance: '0' });
      const client = await signIn(gw, customer);
      const before = standIn.sessions.length;
      standIn.failNext(500, 1);
      const retried = await checkout(client, { amount: '5.00' });
      assert.equal(retried.status, 200, JSON.stringify(retried.body));
      assert.equal(standIn.sessions.length, before + 1);

      standIn.failNext(500, 10);
      refused(await checkout(client, { amount: '5.00' }), 502);
      standIn.failNext(500, 0);
      const listed = await client.call<{ data: PaymentView[] }>('GET', '/payments');
      assert.equal(listed.body.data.length, 1, 'the failed checkout left no payment behind');
    });
  });
}

describe('card top-ups switched off (no STRIPE_SECRET_KEY)', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway();
  });
  after(async () => {
    await gw?.close();
  });

  test('the console learns they are off; checkout and the webhook answer 404; vouchers remain', async () => {
    const client = await signIn(gw, await createCustomer(gw));
    assert.equal((await client.call<{ enabled: boolean }>('GET', '/payments/options')).body.enabled, false);
    refused(await client.call('POST', '/payments/checkout', { amount: '5.00' }), 404);
    const event = signedEvent('checkout.session.completed', { id: 'cs_x' });
    const response = await fetch(`${gw.url}/api/v1/payments/stripe/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': event.signature }, body: event.payload });
    refused({ status: response.status, body: await response.json() }, 404);
  });
});
