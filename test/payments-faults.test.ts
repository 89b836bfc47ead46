import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import Stripe from 'stripe';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { onServer, serverUrl, terminateBackends } from './helpers/postgres-server.ts';
import { createCustomer, signIn } from './helpers/management.ts';
import { completedSession, startStripeStandIn, type StripeStandIn } from './helpers/stripe-stand-in.ts';

/**
 * The payment webhook against a failing PostgreSQL (issue 17): Stripe redelivers an event that was not answered 2xx, so
 * while the database fails mid-settlement (its backend killed in the middle of the settling transaction; the database
 * read-only) the webhook must answer 5xx and move no money, and once the database heals a redelivery credits exactly once.
 */

const WEBHOOK_SECRET = 'whsec_test_faults';
const stripe = new Stripe('sk_test_for_signing_only');


const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The account as the database holds it: its balance, the sum of its ledger, and its card-payment credits (nano-units). */
async function accountFacts(database: string, userId: string): Promise<{ balance: bigint; sum: bigint; credits: Array<{ id: string; amount: bigint }> }> {
  return onServer(async (client) => {
    const balance = await client.query<{ balance: string }>('select cast(balance_nano as text) as balance from users where id = $1', [userId]);
    const rows = await client.query<{ id: string; amount: string; kind: string }>(
      "select id, cast(amount_nano as text) as amount, kind from ledger where account_type = 'user' and account_id = $1",
      [userId],
    );
    return {
      balance: BigInt(balance.rows[0]!.balance),
      sum: rows.rows.reduce((total, row) => total + BigInt(row.amount), 0n),
      credits: rows.rows.filter((row) => row.kind === 'credit' && row.id.startsWith('led_credit_pay')).map((row) => ({ id: row.id, amount: BigInt(row.amount) })),
    };
  }, database);
}

const NANOS = 1_000_000_000n;

/** Waits until a backend of the database other than `holderPid` waits for a lock (the settlement reached the held row). */
async function untilBlocked(database: string, holderPid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const waiting = await onServer((admin) =>
      admin.query("select count(*)::int as n from pg_stat_activity where datname = $1 and wait_event_type = 'Lock' and pid <> $2", [database, holderPid]),
    );
    if ((waiting.rows[0] as { n: number }).n > 0) return;
    assert.ok(Date.now() < deadline, 'the settlement reached the held row');
    await pause(20);
  }
}

describe('the Stripe webhook against a failing database (PostgreSQL)', () => {
  const database = `tg_payfault_${randomBytes(5).toString('hex')}`;
  let standIn: StripeStandIn;
  let gw: TestGateway;

  before(async () => {
    await onServer((client) => client.query(`create database ${database}`));
    standIn = await startStripeStandIn();
    gw = await startTestGateway({
      database: { url: serverUrl(database) },
      config: { stripe: { secretKey: 'sk_test_tollgate', webhookSecret: WEBHOOK_SECRET, apiUrl: standIn.url } },
    });
  });

  after(async () => {
    await gw?.close().catch(() => undefined);
    await standIn?.close();
    await onServer((client) => client.query(`alter database ${database} reset default_transaction_read_only`)).catch(() => undefined);
    await onServer((client) => client.query(`drop database if exists ${database} with (force)`));
  });

  const deliver = async (payload: string, signature: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${gw.url}/api/v1/payments/stripe/webhook`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
      body: payload,
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test('a killed backend mid-settlement and a read-only database answer 5xx and credit nothing; a redelivery after healing credits once', async () => {
    const customer = await createCustomer(gw, { balance: '3.00' });
    const client = await signIn(gw, customer);
    const started = await client.call<{ id: string; sessionId: string }>('POST', '/payments/checkout', { amount: '40.00' });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const payment = started.body;
    const session = completedSession(payment, 4000, { mode: 'payment' });
    // One event, delivered again and again as Stripe does: the same bytes, a fresh signature each time.
    const payload = JSON.stringify({ id: `evt_${randomBytes(8).toString('hex')}`, object: 'event', type: 'checkout.session.completed', api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), data: { object: session }, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null } });
    const sign = () => stripe.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET });
    const initial = 3n * NANOS;

    // 1. The settling transaction is stopped on the account's row (held by us), then its backend is killed: the payment
    //    row was already marked paid and the credit written inside that transaction; both must roll back.
    const holder = new pg.Client({ connectionString: serverUrl(database) });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select id from users where id = $1 for update', [customer.userId]);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      const pending = deliver(payload, sign());
      await untilBlocked(database, holderPid);
      await terminateBackends(database, holderPid);
      const killed = await pending;
      assert.ok(killed.status >= 500, `a settlement whose connection died answers 5xx (Stripe redelivers): ${killed.status} ${JSON.stringify(killed.body)}`);
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    let facts = await accountFacts(database, customer.userId);
    assert.equal(facts.balance, initial, 'nothing was credited');
    assert.deepEqual(facts.credits, []);

    // 2. The database turns read-only: every delivery fails with 5xx and changes nothing.
    await onServer((admin) => admin.query(`alter database ${database} set default_transaction_read_only = on`));
    await terminateBackends(database);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const refused = await deliver(payload, sign());
      assert.ok(refused.status >= 500, `read-only database: ${refused.status} ${JSON.stringify(refused.body)}`);
    }
    facts = await accountFacts(database, customer.userId);
    assert.equal(facts.balance, initial);
    assert.deepEqual(facts.credits, []);

    // 3. Healed: Stripe's next redelivery credits the payment, once, however many deliveries race it.
    await onServer((admin) => admin.query(`alter database ${database} reset default_transaction_read_only`));
    await terminateBackends(database);
    let healed: { status: number; body: Record<string, unknown> } | undefined;
    const deadline = Date.now() + 10_000;
    // The pool may still hold a connection ended above: the first redelivery may fail too, as Stripe would just retry.
    while (!healed || healed.status !== 200) {
      assert.ok(Date.now() < deadline, `the webhook recovers: ${JSON.stringify(healed)}`);
      healed = await deliver(payload, sign());
    }
    assert.equal(healed.body.result, 'credited');
    const again = await Promise.all(Array.from({ length: 4 }, () => deliver(payload, sign())));
    assert.deepEqual(again.map((answer) => [answer.status, answer.body.result]), Array.from({ length: 4 }, () => [200, 'ignored']));

    facts = await accountFacts(database, customer.userId);
    assert.equal(facts.credits.length, 1, 'one credit entry');
    assert.equal(facts.credits[0]!.id, `led_credit_${payment.id}`, 'the credit carries the payment id');
    assert.equal(facts.credits[0]!.amount, 40n * NANOS);
    assert.equal(facts.balance, initial + 40n * NANOS);
    assert.equal(facts.balance, facts.sum, 'balance = Σ ledger');
    assert.equal(await gw.balance({ userId: customer.userId }), '43.00', 'the gateway reads the credited balance');
    const listed = await client.call<{ data: Array<{ id: string; status: string }> }>('GET', '/payments');
    assert.deepEqual(listed.body.data.map((item) => [item.id, item.status]), [[payment.id, 'paid']]);
  });

  test("an auto-recharge's success event killed mid-settlement answers 5xx; Stripe's redelivery credits it once; the charge job's retry charges nothing twice", async () => {
    standIn.deliverTo(`${gw.url}/api/v1/payments/stripe/webhook`, WEBHOOK_SECRET);
    const customer = await createCustomer(gw, { balance: '20.00' });
    const client = await signIn(gw, customer);
    const setup = await client.call<{ id: string }>('POST', '/payments/auto-recharge/card', {});
    assert.equal(setup.status, 200, JSON.stringify(setup.body));
    assert.equal((await standIn.completeSetup(setup.body.id)).body.result, 'card_saved');
    const customerId = standIn.sessions.at(-1)!.fields.customer!;
    assert.equal((await client.call('PUT', '/payments/auto-recharge', { enabled: true, threshold: '10.00', amount: '30.00' })).status, 200);
    assert.equal((await gw.admin('POST', '/balance', { userId: customer.userId, amount: '-15.00' })).status, 200); // 5.00: crossed

    // The charge job asks Stripe, whose success event arrives at once; its settlement stops on the account row we hold
    // (the job, recording the PaymentIntent, then waits for the payment row), and every backend but ours is killed.
    const holder = new pg.Client({ connectionString: serverUrl(database) });
    await holder.connect();
    let running: Promise<unknown> | undefined;
    try {
      await holder.query('begin');
      await holder.query('select id from users where id = $1 for update', [customer.userId]);
      const holderPid = (await holder.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
      running = gw.app.services.runner.runDue();
      await untilBlocked(database, holderPid);
      await terminateBackends(database, holderPid);
      await standIn.idle();
      await holder.query('rollback');
    } finally {
      await holder.end();
    }
    await running;
    const first = standIn.deliveries.filter((delivery) => delivery.type === 'payment_intent.succeeded').at(-1)!;
    assert.ok(first.status >= 500, `the success event met a dead connection: ${first.status} ${JSON.stringify(first.body)}`);
    let facts = await accountFacts(database, customer.userId);
    assert.equal(facts.balance, 5n * NANOS, 'nothing credited');

    // Stripe redelivers (until a 2xx); the job runs again later with the same idempotency key.
    let again = await standIn.redeliver(first);
    for (let round = 0; again.status !== 200 && round < 20; round += 1) again = await standIn.redeliver(first);
    assert.deepEqual([again.status, again.body.result], [200, 'credited']);
    assert.equal((await standIn.redeliver(first)).body.result, 'ignored');
    gw.clock.advance(60_000);
    await gw.app.services.runner.runDue();
    await standIn.idle();
    assert.equal(standIn.paymentIntents.filter((intent) => intent.fields.customer === customerId).length, 1, 'one charge');
    facts = await accountFacts(database, customer.userId);
    assert.equal(facts.credits.length, 1, 'one credit entry');
    assert.equal(facts.credits[0]!.amount, 30n * NANOS);
    assert.equal(facts.balance, 35n * NANOS);
    assert.equal(facts.balance, facts.sum, 'balance = Σ ledger');
  });
});
