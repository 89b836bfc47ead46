import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { LedgerEntry } from '../billing/ledger.ts';

/**
 * A card top-up (DESIGN §15): started by a customer as a Checkout Session (`checkout`), or by auto-recharge as an off-session
 * charge of the saved card (`auto_recharge`); credited when the vendor's signed event says it is paid.
 */
export interface Payment {
  id: string;
  kind: 'checkout' | 'auto_recharge';
  /** The vendor's Checkout Session id (`cs_…`); null for an auto-recharge (no session). */
  sessionId: string | null;
  account: AccountRef;
  /** Who started it. */
  userId: string;
  amount: Money;
  /** The same amount in the currency's smallest unit, as the vendor counts it. */
  minorAmount: number;
  /** ISO 4217, lower case, as the vendor writes it. */
  currency: string;
  /** `failed`: the vendor declined an auto-recharge (`failure` says why); a later success event still credits it. */
  status: 'pending' | 'paid' | 'expired' | 'failed';
  paymentIntent: string | null;
  /** Refunded so far, in the smallest unit (the vendor's `amount_refunded` is cumulative). */
  refundedMinor: number;
  /** The dispute that was lost, if one was: it has been debited. */
  lostDispute: string | null;
  /** Why the vendor declined the charge, as it said it. */
  failure: string | null;
  createdAt: number;
  paidAt: number | null;
}

/** A payment just begun (a checkout opened, an auto-recharge claimed): pending, nothing paid, refunded or disputed yet. */
export const pendingPayment = (
  started: Pick<Payment, 'id' | 'kind' | 'sessionId' | 'account' | 'userId' | 'amount' | 'minorAmount' | 'currency' | 'createdAt'>,
): Payment => ({ ...started, status: 'pending', paymentIntent: null, refundedMinor: 0, lostDispute: null, failure: null, paidAt: null });

export interface PaymentQuery {
  account?: AccountRef;
  limit: number;
  cursor?: string;
}

/** What a settlement does to a payment found (locked) by the repository: the new state and the ledger entries, or nothing. */
export type Settlement = { changes: Partial<Pick<Payment, 'status' | 'paymentIntent' | 'refundedMinor' | 'lostDispute' | 'paidAt' | 'failure'>>; entries: LedgerEntry[] } | undefined;

export interface PaymentsRepository {
  /** With `transaction`, the payment commits with its cause (an auto-recharge claimed in a ledger write). */
  insert(payment: Payment, transaction?: unknown): Promise<void>;
  get(id: string): Promise<Payment | undefined>;
  /** By our id, the session id or the payment intent, whichever is known. */
  find(reference: { id?: string; sessionId?: string; paymentIntent?: string }): Promise<Payment | undefined>;
  list(query: PaymentQuery): Promise<{ payments: Payment[]; nextCursor: string | undefined }>;
  /**
   * Locks the payment, lets `decide` see it as it is now and returns what `decide` did: its changes and ledger entries are
   * written in the same transaction, so concurrent deliveries of one event settle it once.
   */
  settle(id: string, decide: (payment: Payment) => Settlement): Promise<{ payment: Payment; applied: boolean } | undefined>;
}

/** The card vendor, as the payments service needs it (Stripe in production, a local stand-in in tests). */
export interface CardVendor {
  createCheckout(input: {
    paymentId: string;
    minorAmount: number;
    currency: string;
    description: string;
    successUrl: string;
    cancelUrl: string;
    metadata: Record<string, string>;
  }): Promise<{ sessionId: string; url: string }>;
  /** Verifies the signature and returns the event; throws on a bad signature or body. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): VendorEvent;
  /** The vendor's customer of an account (its saved cards hang on it); `idempotencyKey` makes a retried call make one. */
  createCustomer(input: { name: string; metadata: Record<string, string>; idempotencyKey: string }): Promise<string>;
  /** A Checkout Session in setup mode: the customer saves a card for later off-session charges, paying nothing now. */
  createCardSetup(input: { customerId: string; currency: string; reference: string; successUrl: string; cancelUrl: string; metadata: Record<string, string> }): Promise<{ sessionId: string; url: string }>;
  /** The card a completed setup saved. */
  savedCard(setupIntentId: string): Promise<SavedCard & { customerId: string | null }>;
  /**
   * Detaches a saved card from its customer, so the vendor can charge it no more: a removed or replaced card. A card the
   * vendor no longer has, or that is detached already, is done too. Throws when the vendor could not be asked (retry).
   */
  detachCard(paymentMethod: string): Promise<void>;
  /**
   * Charges a saved card with the customer away (off-session, confirmed at once). `accepted`: the vendor took it (its
   * success event credits it); `declined`: the card was refused (insufficient funds, authentication required, …).
   * Throws when the vendor could not be asked (network, 5xx): retry with the same `idempotencyKey`.
   */
  chargeSaved(input: {
    customerId: string;
    paymentMethod: string;
    minorAmount: number;
    currency: string;
    description: string;
    metadata: Record<string, string>;
    idempotencyKey: string;
  }): Promise<{ outcome: 'accepted'; paymentIntent: string } | { outcome: 'declined'; paymentIntent: string | null; reason: string }>;
}

/** A card saved with the vendor for off-session charges; only what the console shows of it. */
export interface SavedCard {
  paymentMethod: string;
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
}

/** The fields of the vendor's events the gateway acts on. */
export type VendorEvent =
  | { type: 'checkout.completed'; id: string; sessionId: string; paymentId: string | null; paid: boolean; minorAmount: number | null; currency: string | null; paymentIntent: string | null }
  | { type: 'checkout.expired'; id: string; sessionId: string; paymentId: string | null }
  | { type: 'charge.refunded'; id: string; chargeId: string; paymentIntent: string | null; paymentId: string | null; refundedMinor: number; currency: string }
  | { type: 'dispute.lost'; id: string; disputeId: string; paymentIntent: string | null; minorAmount: number; currency: string }
  | { type: 'setup.completed'; id: string; sessionId: string; setupIntent: string | null; account: AccountRef | null }
  | { type: 'payment_intent.succeeded'; id: string; paymentIntent: string; paymentId: string | null; minorAmount: number; currency: string }
  | { type: 'payment_intent.failed'; id: string; paymentIntent: string; paymentId: string | null; reason: string }
  | { type: 'other'; id: string; vendorType: string };
