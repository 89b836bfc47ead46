import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { StripeVendor } from '../src/features/payments/stripe-vendor.ts';
import { formatMoney, parseMoney } from '../src/lib/money.ts';
import { errorA, ledger } from './helpers/e2e.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { addressesOf, startMailServer, type TestMailServer } from './helpers/mail-server.ts';
import { createCustomer, signIn, type SignedInClient } from './helpers/management.ts';
import { startStripeStandIn, type StripeStandIn } from './helpers/stripe-stand-in.ts';

const WEBHOOK_SECRET = 'whsec_test_auto_recharge';
const HOUR_MS = 3_600_000;

interface PaymentView {
  id: string;
  kind: string;
  status: string;
  amount: string;
  paymentIntent: string | null;
  failure: string | null;
}

interface AutoRechargeView {
  object: string;
  account: { type: string; id: string };
  enabled: boolean;
  threshold: string | null;
  amount: string | null;
  card: { brand: string; last4: string; expMonth: number; expYear: number } | null;
  lastAttempt: PaymentView | null;
  nextAttemptAfter: string | null;
}

/** The answer has the status and a shape A error body. */
function refused(answer: { status: number; body: unknown }, status: number): ReturnType<typeof errorA> {
  assert.equal(answer.status, status, JSON.stringify(answer.body));
  return errorA(answer.body);
}

const sumOf = (rows: ReadonlyArray<{ amount: string }>): string => formatMoney(rows.reduce((total, row) => total + parseMoney(row.amount)!, 0n));

/** Saves a card for the account through the setup Checkout Session, as the customer would on Stripe's page. */
async function saveCard(client: SignedInClient, standIn: StripeStandIn, options: { orgId?: string; decline?: 'insufficient_funds' | 'card_declined'; last4?: string } = {}): Promise<string> {
  const started = await client.call<{ id: string; url: string }>('POST', '/payments/auto-recharge/card', options.orgId ? { orgId: options.orgId } : {});
  assert.equal(started.status, 200, JSON.stringify(started.body));
  assert.match(started.body.url, /^https:\/\/checkout\.stripe\.com\//);
  const completed = await standIn.completeSetup(started.body.id, { last4: options.last4 ?? '4242', ...(options.decline ? { decline: options.decline } : {}) });
  assert.equal(completed.status, 200, JSON.stringify(completed.body));
  assert.equal(completed.body.result, 'card_saved');
  return completed.paymentMethod;
}

for (const database of ['sqlite', 'postgres'] as const) {
  describe(`card auto-recharge (${database})`, () => {
    let gw: TestGateway;
    let standIn: StripeStandIn;
    let mail: TestMailServer;

    before(async () => {
      [standIn, mail] = await Promise.all([startStripeStandIn(), startMailServer()]);
      gw = await startTestGateway({
        database,
        config: { stripe: { secretKey: 'sk_test_tollgate', webhookSecret: WEBHOOK_SECRET, apiUrl: standIn.url }, smtpUrl: mail.url, mailFrom: 'Tollgate <no-reply@tollgate.test>' },
      });
      standIn.deliverTo(`${gw.url}/api/v1/payments/stripe/webhook`, WEBHOOK_SECRET);
    });
    after(async () => {
      await gw?.close();
      await standIn?.close();
      await mail?.close();
    });

    const adjust = async (userId: string, amount: string): Promise<void> => {
      const response = await gw.admin('POST', '/balance', { userId, amount });
      assert.equal(response.status, 200, JSON.stringify(response.body));
    };
    /** Runs due jobs (the charge), then waits for the events the stand-in sends back. */
    const runJobs = async (): Promise<void> => {
      await gw.app.services.runner.runDue();
      await standIn.idle();
    };
    const chargesOf = (customerId: string) => standIn.paymentIntents.filter((intent) => intent.fields.customer === customerId);

    test('a saved card recharges once when a debit crosses the threshold; only the signed event credits it, once, with the payment id; at most once an hour', async () => {
      const customer = await createCustomer(gw, { balance: '20.00' });
      const client = await signIn(gw, customer);
      const initial = await client.call<AutoRechargeView>('GET', '/payments/auto-recharge');
      assert.equal(initial.status, 200, JSON.stringify(initial.body));
      assert.deepEqual([initial.body.enabled, initial.body.card, initial.body.lastAttempt], [false, null, null]);
      assert.equal(refused(await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '25.00' }), 400).param, 'enabled', 'no card saved yet');

      const customersBefore = standIn.customers.length;
      await saveCard(client, standIn);
      assert.equal(standIn.customers.length, customersBefore + 1, 'one Stripe customer for the account');
      const setup = standIn.sessions.at(-1)!;
      assert.equal(setup.fields.mode, 'setup');
      assert.equal(setup.fields['allowed_payment_method_types[0]'], 'card');
      assert.equal(setup.fields.currency, 'usd');
      assert.equal(setup.fields.customer, standIn.customers.at(-1)!.id);
      assert.ok(setup.fields.success_url!.endsWith('/console/billing?card=saved'));
      const customerId = setup.fields.customer!;

      for (const amount of ['0.50', '10000.01', '12.345']) assert.equal(refused(await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount }), 400).param, 'amount', amount);
      assert.equal(refused(await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '-1', amount: '25.00' }), 400).param, 'threshold');
      refused(await client.withoutCsrf('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '25.00' }), 403);
      const on = await client.call<AutoRechargeView>('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '25.00' });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      assert.deepEqual([on.body.enabled, on.body.threshold, on.body.amount, on.body.card?.last4, on.body.card?.brand], [true, '10.00', '25.00', '4242', 'visa']);

      await adjust(customer.userId, '-5.00'); // 15.00: above the threshold
      await runJobs();
      assert.equal(chargesOf(customerId).length, 0, 'no charge above the threshold');
      await adjust(customer.userId, '-6.00'); // 9.00: crossed
      assert.equal(await gw.balance({ userId: customer.userId }), '9.00', 'nothing is credited before the card is charged');
      await runJobs();
      const [charge] = chargesOf(customerId);
      assert.ok(charge, 'the crossing charged the card');
      assert.equal(chargesOf(customerId).length, 1);
      assert.deepEqual(
        [charge.fields.amount, charge.fields.currency, charge.fields.off_session, charge.fields.confirm, charge.fields.customer],
        ['2500', 'usd', 'true', 'true', customerId],
        'an off-session, confirmed PaymentIntent of the amount in cents',
      );
      const paymentId = charge.fields['metadata[tollgate_payment]']!;
      assert.match(paymentId, /^pay_/);
      assert.equal(charge.idempotencyKey, `auto-recharge-${paymentId}`);
      const succeeded = standIn.deliveries.find((delivery) => delivery.type === 'payment_intent.succeeded' && delivery.payload.includes(paymentId))!;
      assert.deepEqual([succeeded.status, succeeded.body.result], [200, 'credited']);
      assert.equal(await gw.balance({ userId: customer.userId }), '34.00');

      // Redelivered, and the job run again: nothing more.
      assert.equal((await standIn.redeliver(succeeded)).body.result, 'ignored');
      await runJobs();
      assert.equal(chargesOf(customerId).length, 1);
      assert.equal(await gw.balance({ userId: customer.userId }), '34.00');
      const rows = await ledger(gw, { userId: customer.userId });
      const credits = rows.filter((row) => row.description.includes(paymentId));
      assert.equal(credits.length, 1, 'one ledger entry for the payment');
      assert.deepEqual([credits[0]!.id, credits[0]!.amount, credits[0]!.kind], [`led_credit_${paymentId}`, '25.00', 'credit']);
      assert.equal(sumOf(rows), '34.00', 'balance = Σ ledger');

      const state = await client.call<AutoRechargeView>('GET', '/payments/auto-recharge');
      assert.deepEqual([state.body.lastAttempt?.id, state.body.lastAttempt?.status, state.body.lastAttempt?.kind], [paymentId, 'paid', 'auto_recharge']);
      assert.equal(state.body.nextAttemptAfter, new Date(gw.clock.now() + HOUR_MS).toISOString());
      const listed = await client.call<{ data: PaymentView[] }>('GET', '/payments');
      assert.deepEqual(listed.body.data.map((payment) => [payment.id, payment.kind, payment.status]), [[paymentId, 'auto_recharge', 'paid']]);

      // Within the hour another crossing charges nothing; after it, the next one does.
      await adjust(customer.userId, '-30.00'); // 4.00: crossed again
      await runJobs();
      assert.equal(chargesOf(customerId).length, 1, 'at most one charge an hour');
      await adjust(customer.userId, '10.00'); // 14.00
      gw.clock.advance(HOUR_MS + 60_000);
      await adjust(customer.userId, '-5.00'); // 9.00: crossed, an hour later
      await runJobs();
      assert.equal(chargesOf(customerId).length, 2);
      assert.equal(await gw.balance({ userId: customer.userId }), '34.00');
      assert.equal(sumOf(await ledger(gw, { userId: customer.userId })), '34.00');

      const off = await client.call<AutoRechargeView>('PUT', '/payments/auto-recharge', { enabled: false });
      assert.deepEqual([off.body.enabled, off.body.threshold, off.body.amount], [false, '10.00', '25.00'], 'turning it off keeps the numbers');
      await adjust(customer.userId, '-30.00');
      await runJobs();
      assert.equal(chargesOf(customerId).length, 2, 'off: no charge');
    });

    test('a declined charge is recorded on the payment, mailed, and shown; auto-recharge stays on and a newly saved card recharges', async () => {
      mail.messages.splice(0);
      const customer = await createCustomer(gw, { balance: '12.00' });
      const client = await signIn(gw, customer);
      await saveCard(client, standIn, { decline: 'insufficient_funds', last4: '9995' });
      const customerId = standIn.sessions.at(-1)!.fields.customer!;
      assert.equal((await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '20.00' })).status, 200);
      await adjust(customer.userId, '-3.00'); // 9.00: crossed
      await runJobs();
      assert.equal(chargesOf(customerId).length, 1);
      assert.equal(chargesOf(customerId)[0]!.status, 'requires_payment_method');
      assert.equal(await gw.balance({ userId: customer.userId }), '9.00', 'nothing credited');

      const state = await client.call<AutoRechargeView>('GET', '/payments/auto-recharge');
      assert.equal(state.body.enabled, true, 'a decline turns nothing off');
      assert.equal(state.body.lastAttempt?.status, 'failed');
      assert.match(state.body.lastAttempt?.failure ?? '', /insufficient funds/);
      // The vendor's own failure event arrives too: already recorded, nothing more.
      const failedEvent = standIn.deliveries.find((delivery) => delivery.type === 'payment_intent.payment_failed' && delivery.payload.includes(state.body.lastAttempt!.id))!;
      assert.deepEqual([failedEvent.status, failedEvent.body.result], [200, 'ignored']);

      for (let round = 0; round < 50 && mail.to(customer.email).length === 0; round++) {
        await gw.app.services.runner.runDue();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const mails = mail.to(customer.email);
      assert.equal(mails.length, 1, 'one mail about the failure');
      assert.deepEqual(addressesOf(mails[0]!), [customer.email]);
      assert.equal(mails[0]!.subject, 'Auto-recharge failed: 20.00 USD not charged');
      assert.match(mails[0]!.text ?? '', /ending in 9995/);
      assert.match(mails[0]!.text ?? '', /insufficient funds/);
      assert.match(mails[0]!.text ?? '', /\/console\/billing\n/);
      await standIn.redeliver(failedEvent);
      gw.clock.advance(20 * 60_000);
      await gw.app.services.runner.runDue();
      assert.equal(mail.to(customer.email).length, 1, 'a redelivered failure event mails nothing more');

      // An hour later the customer saves another card while the balance is still below: it recharges at once.
      gw.clock.advance(HOUR_MS);
      await saveCard(client, standIn, { last4: '1881' });
      await runJobs();
      assert.equal(chargesOf(customerId).length, 2);
      assert.equal(await gw.balance({ userId: customer.userId }), '29.00');
      const after = await client.call<AutoRechargeView>('GET', '/payments/auto-recharge');
      assert.deepEqual([after.body.card?.last4, after.body.lastAttempt?.status], ['1881', 'paid']);
      const removed = await client.call<AutoRechargeView>('DELETE', '/payments/auto-recharge/card');
      assert.deepEqual([removed.status, removed.body.card, removed.body.enabled], [200, null, false]);
    });

    test('a replaced or removed card is detached at Stripe, after an outage too; a detached card is charged no more', async () => {
      const customer = await createCustomer(gw, { balance: '12.00' });
      const client = await signIn(gw, customer);
      const first = await saveCard(client, standIn, { last4: '1111' });
      const customerId = standIn.sessions.at(-1)!.fields.customer!;
      const second = await saveCard(client, standIn, { last4: '2222' });
      await runJobs();
      assert.deepEqual(standIn.detached.filter((id) => id === first || id === second), [first], 'the replaced card is detached, the new one kept');
      const detachJob = () =>
        gw.storage.db.selectFrom('jobs').select(['status', 'attempts', 'last_error']).where('kind', '=', 'payment.card_detach').where('subject_id', '=', second).executeTakeFirst();
      assert.equal(await detachJob(), undefined, 'the card in use has no detach job');

      // Stripe is down (the client's own two retries fail too): the card is forgotten at once, its detach waits.
      standIn.failNext(500, 3);
      const removed = await client.call<AutoRechargeView>('DELETE', '/payments/auto-recharge/card');
      assert.deepEqual([removed.status, removed.body.card, removed.body.enabled], [200, null, false]);
      await runJobs();
      assert.ok(!standIn.detached.includes(second), 'not detached while the vendor fails');
      const waiting = await detachJob();
      assert.deepEqual([waiting?.status, waiting?.attempts], ['pending', 1]);
      assert.match(waiting?.last_error ?? '', /error/i);
      gw.clock.advance(60_000);
      await runJobs();
      assert.ok(standIn.detached.includes(second), 'detached once the vendor answers');
      assert.equal((await detachJob())?.status, 'done');

      // Removing when no card is saved detaches nothing more; the detached cards cannot be charged at the vendor.
      assert.equal((await client.call('DELETE', '/payments/auto-recharge/card')).status, 200);
      await runJobs();
      assert.equal(standIn.detached.filter((id) => id === first || id === second).length, 2);
      const charge = await fetch(`${standIn.url}/v1/payment_intents`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ amount: '100', currency: 'usd', customer: customerId, payment_method: second, off_session: 'true', confirm: 'true' }),
      });
      assert.equal(charge.status, 400, 'the vendor refuses to charge a detached card');

      // Detaching what is detached already, or what the vendor does not know, is done; an outage is an error to retry.
      const vendor = new StripeVendor('sk_test_tollgate', WEBHOOK_SECRET, standIn.url);
      await vendor.detachCard(first);
      await vendor.detachCard('pm_test_never_made');
      standIn.failNext(500, 3);
      await assert.rejects(vendor.detachCard(second));
      standIn.failNext(500, 0);
    });

    test("an org's auto-recharge is set by its owner or admin; a member gets 403, another org 404; the org is credited", async () => {
      const owner = await createCustomer(gw, { balance: '0' });
      const org = await gw.admin<{ id: string }>('POST', '/orgs', { name: `Recharge Co ${randomBytes(3).toString('hex')}`, ownerId: owner.userId, balance: '50.00' });
      const member = await createCustomer(gw, { balance: '0' });
      await gw.admin('POST', `/orgs/${org.body.id}/members`, { userId: member.userId, role: 'member' });
      const stranger = await signIn(gw, await createCustomer(gw, { balance: '0' }));
      const memberClient = await signIn(gw, member);
      const ownerClient = await signIn(gw, owner);
      const orgId = org.body.id;

      refused(await memberClient.call('GET', `/payments/auto-recharge?orgId=${orgId}`), 403);
      refused(await memberClient.call('POST', '/payments/auto-recharge/card', { orgId }), 403);
      refused(await stranger.call('PUT', '/payments/auto-recharge', { orgId, enabled: false }), 404);
      await saveCard(ownerClient, standIn, { orgId });
      const customerId = standIn.sessions.at(-1)!.fields.customer!;
      const set = await ownerClient.call<AutoRechargeView>('PUT', '/payments/auto-recharge', { orgId, enabled: true, threshold: '40.00', amount: '100.00' });
      assert.deepEqual([set.status, set.body.account], [200, { type: 'org', id: orgId }]);
      assert.equal((await ownerClient.call<AutoRechargeView>('GET', '/payments/auto-recharge')).body.card, null, "the owner's own account has no card");

      const debit = await gw.admin('POST', '/balance', { orgId, amount: '-15.00' }); // 35.00: crossed
      assert.equal(debit.status, 200);
      await runJobs();
      assert.equal(chargesOf(customerId).length, 1);
      assert.equal(chargesOf(customerId)[0]!.fields['metadata[account_id]'], orgId);
      assert.equal(await gw.balance({ orgId }), '135.00');
      assert.equal(await gw.balance({ userId: owner.userId }), '0.00');
    });
  });
}

describe('auto-recharge across two gateways on one PostgreSQL database', () => {
  let first: TestGateway;
  let second: TestGateway;
  let standIn: StripeStandIn;

  before(async () => {
    standIn = await startStripeStandIn();
    const config = { stripe: { secretKey: 'sk_test_tollgate', webhookSecret: WEBHOOK_SECRET, apiUrl: standIn.url } };
    first = await startTestGateway({ database: 'postgres', config });
    second = await startTestGateway({ database: { url: first.databaseUrl }, config, simulator: first.simulator });
    standIn.deliverTo(`${second.url}/api/v1/payments/stripe/webhook`, WEBHOOK_SECRET);
  });
  after(async () => {
    await second?.close();
    await first?.close();
    await standIn?.close();
  });

  test('the hourly rule is kept in the database: a second crossing on the other process within the hour charges nothing', async () => {
    const customer = await createCustomer(first, { balance: '20.00' });
    const client = await signIn(first, customer);
    await saveCard(client, standIn);
    const customerId = standIn.sessions.at(-1)!.fields.customer!;
    assert.equal((await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '5.00' })).status, 200);

    assert.equal((await first.admin('POST', '/balance', { userId: customer.userId, amount: '-11.00' })).status, 200); // 9.00: crossed on the first
    assert.equal((await second.admin('POST', '/balance', { userId: customer.userId, amount: '11.00' })).status, 200); // 20.00
    assert.equal((await second.admin('POST', '/balance', { userId: customer.userId, amount: '-11.00' })).status, 200); // 9.00: crossed on the second
    await Promise.all([first.app.services.runner.runDue(), second.app.services.runner.runDue()]);
    await standIn.idle();
    await Promise.all([first.app.services.runner.runDue(), second.app.services.runner.runDue()]);
    assert.equal(standIn.paymentIntents.filter((intent) => intent.fields.customer === customerId).length, 1, 'one charge in the hour, whichever process saw the crossing');
    assert.equal(await first.balance({ userId: customer.userId }), '14.00');
    assert.equal(sumOf(await ledger(first, { userId: customer.userId })), '14.00');
  });
});
