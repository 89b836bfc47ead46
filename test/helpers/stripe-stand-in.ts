import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/** A Checkout Session as the stand-in made it, with the form fields the gateway sent. */
/** The Checkout Session of a paid payment, as Stripe sends it in `checkout.session.completed`. */
export const completedSession = (payment: { id: string; sessionId: string | null }, minor: number, extra: Record<string, unknown> = {}) => ({
  id: payment.sessionId,
  object: 'checkout.session',
  amount_total: minor,
  currency: 'usd',
  client_reference_id: payment.id,
  metadata: { tollgate_payment: payment.id },
  payment_intent: `pi_${payment.id}`,
  payment_status: 'paid',
  status: 'complete',
  ...extra,
});

export interface StandInSession {
  id: string;
  fields: Record<string, string>;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

/** An off-session PaymentIntent the gateway asked for, and how the card answered. */
export interface StandInPaymentIntent {
  id: string;
  fields: Record<string, string>;
  idempotencyKey: string | undefined;
  status: 'succeeded' | 'requires_payment_method';
}

/** How a saved card answers off-session charges: accepted, or declined with Stripe's code. */
export type CardBehaviour = { decline?: 'card_declined' | 'insufficient_funds' | 'authentication_required' };

/** An event the stand-in delivered to the gateway's webhook, and the answer it got. */
export interface StandInDelivery {
  type: string;
  payload: string;
  status: number;
  body: Record<string, unknown>;
}

/**
 * A local stand-in of the Stripe API for the payments tests (the `stripe` package takes a host, port and protocol). It answers
 * as Stripe does — form-encoded requests, Stripe's objects and error bodies — and records what it got:
 * - `POST /v1/checkout/sessions` (payment and setup mode), `POST /v1/customers`, `GET /v1/setup_intents/:id` (with
 *   `expand[]=payment_method`), `POST /v1/payment_intents` (off-session, confirmed: succeeded, or a 402 card error),
 *   `POST /v1/payment_methods/:id/detach` (a detached card can be charged no more);
 * - replays of one Idempotency-Key answer the first answer again, with no second effect;
 * - once told the webhook (`deliverTo`), it sends signed events as Stripe does: `checkout.session.completed` when a test
 *   completes a card setup, `payment_intent.succeeded` / `payment_intent.payment_failed` after each off-session charge.
 */
export interface StripeStandIn {
  url: string;
  sessions: StandInSession[];
  customers: Array<{ id: string; fields: Record<string, string> }>;
  paymentIntents: StandInPaymentIntent[];
  deliveries: StandInDelivery[];
  /** Payment methods detached from their customer (`POST /v1/payment_methods/:id/detach`), in order. */
  detached: string[];
  /** Answer the next `times` POST requests with this status (a vendor outage). */
  failNext(status: number, times?: number): void;
  /** Where signed events go (the gateway's webhook) and the secret they are signed with. */
  deliverTo(url: string, secret: string): void;
  /** The customer enters a card on the setup session's page: it is saved and the session's completion event is delivered. */
  completeSetup(sessionId: string, card?: { brand?: string; last4?: string } & CardBehaviour): Promise<StandInDelivery & { paymentMethod: string }>;
  /** Changes how a saved card answers from now on. */
  setCard(paymentMethod: string, behaviour: CardBehaviour): void;
  /** Delivers an event again (Stripe's redelivery): the same payload, a fresh signature. */
  redeliver(delivery: StandInDelivery): Promise<StandInDelivery>;
  /** Resolves when every event started so far was delivered. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

const signer = new Stripe('sk_test_for_signing_only');
const stripeId = (prefix: string): string => `${prefix}_test_${randomBytes(12).toString('hex')}`;
const metadataOf = (fields: Record<string, string>): Record<string, string> =>
  Object.fromEntries(Object.entries(fields).filter(([name]) => name.startsWith('metadata[')).map(([name, value]) => [name.slice(9, -1), value]));

const DECLINES: Record<NonNullable<CardBehaviour['decline']>, { code: string; decline_code?: string; message: string }> = {
  card_declined: { code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' },
  insufficient_funds: { code: 'card_declined', decline_code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  authentication_required: { code: 'authentication_required', decline_code: 'authentication_required', message: 'Your card was declined. This transaction requires authentication.' },
};

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions: StandInSession[] = [];
  const customers: Array<{ id: string; fields: Record<string, string> }> = [];
  const paymentIntents: StandInPaymentIntent[] = [];
  const deliveries: StandInDelivery[] = [];
  const detached: string[] = [];
  const setupSessions = new Map<string, { session: Record<string, unknown>; setupIntent: string; customer: string; metadata: Record<string, string> }>();
  const setupIntents = new Map<string, { customer: string; paymentMethod: string | null; metadata: Record<string, string> }>();
  const paymentMethods = new Map<string, { customer: string; brand: string; last4: string } & CardBehaviour>();
  const replies = new Map<string, { status: number; body: unknown }>();
  const pending = new Set<Promise<unknown>>();
  let target: { url: string; secret: string } | undefined;
  let failure: number | undefined;
  let failures = 0;

  const post = async (type: string, payload: string): Promise<StandInDelivery> => {
    if (!target) throw new Error('the stand-in was not told where to deliver events (deliverTo)');
    const signature = signer.webhooks.generateTestHeaderString({ payload, secret: target.secret });
    const response = await fetch(target.url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature }, body: payload });
    const delivery = { type, payload, status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> };
    deliveries.push(delivery);
    return delivery;
  };
  const deliver = (type: string, object: Record<string, unknown>): Promise<StandInDelivery> => {
    const payload = JSON.stringify({ id: stripeId('evt'), object: 'event', type, api_version: '2026-10-28.endive', created: Math.floor(Date.now() / 1000), data: { object }, livemode: false, pending_webhooks: 1, request: { id: null, idempotency_key: null } });
    const sent = post(type, payload);
    pending.add(sent);
    void sent.catch(() => undefined).finally(() => pending.delete(sent));
    return sent;
  };

  const checkoutSession = (fields: Record<string, string>, idempotencyKey: string | undefined, authorization: string | undefined) => {
    const id = stripeId('cs');
    sessions.push({ id, fields, idempotencyKey, authorization });
    const metadata = metadataOf(fields);
    const base = { id, object: 'checkout.session', client_reference_id: fields.client_reference_id ?? null, metadata, mode: fields.mode, status: 'open', success_url: fields.success_url, cancel_url: fields.cancel_url, url: `https://checkout.stripe.com/c/pay/${id}` };
    if (fields.mode === 'setup') {
      const setupIntent = stripeId('seti');
      const customer = fields.customer ?? '';
      setupIntents.set(setupIntent, { customer, paymentMethod: null, metadata });
      const session = { ...base, customer, currency: fields.currency ?? null, setup_intent: setupIntent, payment_intent: null, payment_status: 'no_payment_required', amount_total: null };
      setupSessions.set(id, { session, setupIntent, customer, metadata });
      return session;
    }
    const unitAmount = Number(fields['line_items[0][price_data][unit_amount]']);
    return { ...base, amount_total: unitAmount * Number(fields['line_items[0][quantity]'] ?? 1), currency: fields['line_items[0][price_data][currency]'], payment_intent: null, payment_status: 'unpaid' };
  };

  const paymentIntent = (fields: Record<string, string>, idempotencyKey: string | undefined): { status: number; body: unknown } => {
    const id = stripeId('pi');
    const method = paymentMethods.get(fields.payment_method ?? '');
    const amount = Number(fields.amount);
    const intent = { id, object: 'payment_intent', amount, amount_received: 0, currency: fields.currency, customer: fields.customer ?? null, payment_method: fields.payment_method ?? null, metadata: metadataOf(fields), description: fields.description ?? null, status: 'succeeded', last_payment_error: null as unknown };
    if (!method || method.customer !== fields.customer) {
      return { status: 400, body: { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'payment_method', message: `No such PaymentMethod: '${fields.payment_method}'` } } };
    }
    if (method.decline) {
      const decline = DECLINES[method.decline];
      const error = { type: 'card_error', ...decline, payment_method: { id: fields.payment_method } };
      const failed = { ...intent, status: 'requires_payment_method', last_payment_error: error };
      paymentIntents.push({ id, fields, idempotencyKey, status: 'requires_payment_method' });
      void deliver('payment_intent.payment_failed', failed);
      return { status: 402, body: { error: { ...error, payment_intent: failed } } };
    }
    const succeeded = { ...intent, amount_received: amount };
    paymentIntents.push({ id, fields, idempotencyKey, status: 'succeeded' });
    void deliver('payment_intent.succeeded', succeeded);
    return { status: 200, body: succeeded };
  };

  const answer = (method: string, url: URL, fields: Record<string, string>, idempotencyKey: string | undefined, authorization: string | undefined): { status: number; body: unknown } => {
    const missing = { status: 404, body: { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${url.pathname}).` } } };
    if (method === 'GET') {
      const match = /^\/v1\/setup_intents\/([\w]+)$/.exec(url.pathname);
      const intent = match ? setupIntents.get(match[1]!) : undefined;
      if (!match || !intent) return missing;
      const expand = [...url.searchParams.entries()].some(([name, value]) => name.startsWith('expand') && value === 'payment_method');
      const card = intent.paymentMethod ? paymentMethods.get(intent.paymentMethod) : undefined;
      const paymentMethod = intent.paymentMethod && card && expand
        ? { id: intent.paymentMethod, object: 'payment_method', type: 'card', customer: card.customer, card: { brand: card.brand, display_brand: card.brand, last4: card.last4, exp_month: 12, exp_year: 2030 } }
        : intent.paymentMethod;
      return { status: 200, body: { id: match[1], object: 'setup_intent', customer: intent.customer, metadata: intent.metadata, status: intent.paymentMethod ? 'succeeded' : 'requires_payment_method', usage: 'off_session', payment_method: paymentMethod } };
    }
    if (method !== 'POST') return missing;
    const detach = /^\/v1\/payment_methods\/([\w]+)\/detach$/.exec(url.pathname);
    if (detach) {
      const id = detach[1]!;
      const card = paymentMethods.get(id);
      if (!card) return { status: 404, body: { error: { type: 'invalid_request_error', code: 'resource_missing', param: 'payment_method', message: `No such PaymentMethod: '${id}'` } } };
      if (!card.customer) return { status: 400, body: { error: { type: 'invalid_request_error', message: 'The payment method you provided is not attached to a customer so detachment is impossible.' } } };
      paymentMethods.set(id, { ...card, customer: '' });
      detached.push(id);
      return { status: 200, body: { id, object: 'payment_method', type: 'card', customer: null, card: { brand: card.brand, last4: card.last4, exp_month: 12, exp_year: 2030 } } };
    }
    switch (url.pathname) {
      case '/v1/checkout/sessions':
        return { status: 200, body: checkoutSession(fields, idempotencyKey, authorization) };
      case '/v1/customers': {
        const id = stripeId('cus');
        customers.push({ id, fields });
        return { status: 200, body: { id, object: 'customer', name: fields.name ?? null, metadata: metadataOf(fields) } };
      }
      case '/v1/payment_intents':
        return paymentIntent(fields, idempotencyKey);
      default:
        return missing;
    }
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
        response.end(JSON.stringify(body));
      };
      const method = request.method ?? 'GET';
      if (method === 'POST' && failure !== undefined && failures > 0) {
        failures -= 1;
        send(failure, { error: { type: 'api_error', message: 'An unknown error occurred' } });
        return;
      }
      const idempotencyKey = typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined;
      const replayKey = idempotencyKey ? `${request.url}|${idempotencyKey}` : undefined;
      const replay = replayKey ? replies.get(replayKey) : undefined;
      if (replay) {
        send(replay.status, replay.body);
        return;
      }
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const reply = answer(method, new URL(request.url ?? '/', 'http://stand-in'), fields, idempotencyKey, request.headers.authorization);
      if (replayKey && reply.status < 500) replies.set(replayKey, reply);
      send(reply.status, reply.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    customers,
    paymentIntents,
    deliveries,
    detached,
    failNext: (status, times = 1) => {
      failure = status;
      failures = times;
    },
    deliverTo: (url, secret) => {
      target = { url, secret };
    },
    completeSetup: async (sessionId, card = {}) => {
      const setup = setupSessions.get(sessionId);
      if (!setup) throw new Error(`no setup session ${sessionId}`);
      const paymentMethod = stripeId('pm');
      paymentMethods.set(paymentMethod, { customer: setup.customer, brand: card.brand ?? 'visa', last4: card.last4 ?? '4242', ...(card.decline ? { decline: card.decline } : {}) });
      setupIntents.set(setup.setupIntent, { customer: setup.customer, paymentMethod, metadata: setup.metadata });
      return { ...(await deliver('checkout.session.completed', { ...setup.session, status: 'complete' })), paymentMethod };
    },
    setCard: (paymentMethod, behaviour) => {
      const card = paymentMethods.get(paymentMethod);
      if (!card) throw new Error(`no payment method ${paymentMethod}`);
      paymentMethods.set(paymentMethod, { customer: card.customer, brand: card.brand, last4: card.last4, ...(behaviour.decline ? { decline: behaviour.decline } : {}) });
    },
    redeliver: (delivery) => post(delivery.type, delivery.payload),
    idle: async () => {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
