import Stripe from 'stripe';
import type { CardVendor, VendorEvent } from './payments.ts';

/** Thrown for a webhook whose signature or body does not check out. */
export class BadSignatureError extends Error {
  override readonly name = 'BadSignatureError';
}

const idOf = (value: string | { id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

/**
 * Stripe through its own package: Checkout Sessions for top-ups and `stripe.webhooks.constructEvent` for the signature check
 * (timestamped HMAC-SHA256 of the raw body, 5 minutes of tolerance). `apiUrl` points the client at another host (tests).
 */
export class StripeVendor implements CardVendor {
  private readonly stripe: Stripe;

  constructor(secretKey: string, private readonly webhookSecret: string | undefined, apiUrl?: string) {
    const target = apiUrl ? new URL(apiUrl) : undefined;
    this.stripe = new Stripe(secretKey, {
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

function toVendorEvent(event: Stripe.Event): VendorEvent {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded': {
      const session = event.data.object;
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
    default:
      return { type: 'other', id: event.id, vendorType: event.type };
  }
}
