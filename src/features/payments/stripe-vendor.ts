import { createRequire } from 'node:module';
import type Stripe from 'stripe';
import type { AccountRef } from '../accounts/accounts.ts';
import type { CardVendor, SavedCard, VendorEvent } from './payments.ts';

/** Thrown for a webhook whose signature or body does not check out. */
export class BadSignatureError extends Error {
  override readonly name = 'BadSignatureError';
}

/**
 * The package, loaded when a gateway with card payments makes its vendor: a static import held ~20 MB of RSS in every
 * process, card payments on or not (its CommonJS export is the constructor, with `errors` on it).
 */
const loadStripe = (): typeof Stripe => createRequire(import.meta.url)('stripe') as typeof Stripe;

const idOf = (value: string | { id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

/**
 * Stripe through its own package: Checkout Sessions for top-ups (payment mode) and saved cards (setup mode, on a Customer),
 * off-session PaymentIntents for auto-recharge, and `stripe.webhooks.constructEvent` for the signature check (timestamped
 * HMAC-SHA256 of the raw body, 5 minutes of tolerance). `apiUrl` points the client at another host (tests).
 */
export class StripeVendor implements CardVendor {
  private readonly stripe: Stripe;
  private readonly StripeModule = loadStripe();

  constructor(secretKey: string, private readonly webhookSecret: string | undefined, apiUrl?: string) {
    const target = apiUrl ? new URL(apiUrl) : undefined;
    this.stripe = new this.StripeModule(secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      ...(target ? { host: target.hostname, port: target.port || (target.protocol === 'https:' ? 443 : 80), protocol: target.protocol.replace(':', '') as 'http' | 'https' } : {}),
    });
  }

  async createCheckout(input: Parameters<CardVendor['createCheckout']>[0]): Promise<{ sessionId: string; url: string }> {
    const session = await this.stripe.checkout.sessions.create(
      {
        mode: 'payment',
        client_reference_id: input.paymentId,
        metadata: input.metadata,
        payment_intent_data: { metadata: input.metadata },
        line_items: [{ quantity: 1, price_data: { currency: input.currency, unit_amount: input.minorAmount, product_data: { name: input.description } } }],
        success_url: input.successUrl,
        cancel_url: input.cancelUrl,
      },
      // One session per payment, even when the request is retried.
      { idempotencyKey: `checkout-${input.paymentId}` },
    );
    if (!session.url) throw new Error('the card vendor returned a Checkout Session without a url');
    return { sessionId: session.id, url: session.url };
  }

  async createCustomer(input: Parameters<CardVendor['createCustomer']>[0]): Promise<string> {
    const customer = await this.stripe.customers.create({ name: input.name, metadata: input.metadata }, { idempotencyKey: input.idempotencyKey });
    return customer.id;
  }

  async createCardSetup(input: Parameters<CardVendor['createCardSetup']>[0]): Promise<{ sessionId: string; url: string }> {
    const session = await this.stripe.checkout.sessions.create({
      mode: 'setup',
      customer: input.customerId,
      currency: input.currency,
      allowed_payment_method_types: ['card'],
      client_reference_id: input.reference,
      metadata: input.metadata,
      setup_intent_data: { metadata: input.metadata },
      success_url: input.successUrl,
      cancel_url: input.cancelUrl,
    });
    if (!session.url) throw new Error('the card vendor returned a Checkout Session without a url');
    return { sessionId: session.id, url: session.url };
  }

  async savedCard(setupIntentId: string): Promise<SavedCard & { customerId: string | null }> {
    const intent = await this.stripe.setupIntents.retrieve(setupIntentId, { expand: ['payment_method'] });
    const method = intent.payment_method;
    if (!method || typeof method === 'string' || !method.card) throw new Error(`setup ${setupIntentId} saved no card`);
    return {
      customerId: idOf(intent.customer),
      paymentMethod: method.id,
      brand: method.card.display_brand ?? method.card.brand,
      last4: method.card.last4,
      expMonth: method.card.exp_month,
      expYear: method.card.exp_year,
    };
  }

  async detachCard(paymentMethod: string): Promise<void> {
    try {
      await this.stripe.paymentMethods.detach(paymentMethod);
    } catch (error) {
      // Gone (resource_missing) or attached to no customer any more (a 400 saying so): what was asked is already true.
      if (error instanceof this.StripeModule.errors.StripeInvalidRequestError && (error.code === 'resource_missing' || /not attached/i.test(error.message))) return;
      throw error;
    }
  }

  async chargeSaved(input: Parameters<CardVendor['chargeSaved']>[0]): ReturnType<CardVendor['chargeSaved']> {
    try {
      const intent = await this.stripe.paymentIntents.create(
        {
          amount: input.minorAmount,
          currency: input.currency,
          customer: input.customerId,
          payment_method: input.paymentMethod,
          off_session: true,
          confirm: true,
          description: input.description,
          metadata: input.metadata,
        },
        { idempotencyKey: input.idempotencyKey },
      );
      if (intent.status === 'succeeded' || intent.status === 'processing') return { outcome: 'accepted', paymentIntent: intent.id };
      // requires_action and the like: off-session, nobody is there to act.
      return { outcome: 'declined', paymentIntent: intent.id, reason: `the card needs the customer (${intent.status})` };
    } catch (error) {
      // A card error (HTTP 402) is the card's answer; anything else (network, 5xx, 429) is the caller's to retry.
      if (error instanceof this.StripeModule.errors.StripeCardError) {
        const reason = [error.message, error.decline_code ?? error.code].filter(Boolean).join(' — ');
        return { outcome: 'declined', paymentIntent: error.payment_intent?.id ?? null, reason };
      }
      throw error;
    }
  }

  verifyEvent(rawBody: Buffer, signature: string | undefined): VendorEvent {
    if (!this.webhookSecret) throw new BadSignatureError('STRIPE_WEBHOOK_SECRET is not set: webhooks cannot be verified');
    if (!signature) throw new BadSignatureError('stripe-signature: header is missing');
    let event: Stripe.Event;
    try {
      event = this.stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret);
    } catch (error) {
      throw new BadSignatureError(error instanceof Error ? error.message : String(error));
    }
    return toVendorEvent(event);
  }
}

/** The account a setup session was opened for, from the metadata the gateway gave it. */
function accountOf(metadata: Stripe.Metadata | null | undefined): AccountRef | null {
  const type = metadata?.account_type;
  const id = metadata?.account_id;
  return (type === 'user' || type === 'org') && id ? { type, id } : null;
}

function toVendorEvent(event: Stripe.Event): VendorEvent {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
      if (session.mode === 'setup') {
        return { type: 'setup.completed', id: event.id, sessionId: session.id, setupIntent: idOf(session.setup_intent), account: accountOf(session.metadata) };
      }
      return {
        type: 'checkout.completed',
        id: event.id,
        sessionId: session.id,
        paymentId: session.client_reference_id ?? session.metadata?.tollgate_payment ?? null,
        paid: session.payment_status === 'paid',
        minorAmount: session.amount_total,
        currency: session.currency,
        paymentIntent: idOf(session.payment_intent),
      };
    }
    case 'checkout.session.expired': {
      const session = event.data.object;
      return { type: 'checkout.expired', id: event.id, sessionId: session.id, paymentId: session.client_reference_id ?? null };
    }
    case 'charge.refunded': {
      const charge = event.data.object;
      return {
        type: 'charge.refunded',
        id: event.id,
        chargeId: charge.id,
        paymentIntent: idOf(charge.payment_intent),
        paymentId: charge.metadata?.tollgate_payment ?? null,
        refundedMinor: charge.amount_refunded,
        currency: charge.currency,
      };
    }
    case 'charge.dispute.closed': {
      const dispute = event.data.object;
      if (dispute.status !== 'lost') return { type: 'other', id: event.id, vendorType: `${event.type}:${dispute.status}` };
      return { type: 'dispute.lost', id: event.id, disputeId: dispute.id, paymentIntent: idOf(dispute.payment_intent), minorAmount: dispute.amount, currency: dispute.currency };
    }
    case 'payment_intent.succeeded': {
      const intent = event.data.object;
      return { type: 'payment_intent.succeeded', id: event.id, paymentIntent: intent.id, paymentId: intent.metadata?.tollgate_payment ?? null, minorAmount: intent.amount_received, currency: intent.currency };
    }
    case 'payment_intent.payment_failed': {
      const intent = event.data.object;
      const error = intent.last_payment_error;
      const reason = [error?.message, error?.decline_code ?? error?.code].filter(Boolean).join(' — ') || 'the card was declined';
      return { type: 'payment_intent.failed', id: event.id, paymentIntent: intent.id, paymentId: intent.metadata?.tollgate_payment ?? null, reason };
    }
    default:
      return { type: 'other', id: event.id, vendorType: event.type };
  }
}
