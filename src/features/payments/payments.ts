import type { Money } from '../../lib/money.ts';
import type { AccountRef } from '../accounts/accounts.ts';
import type { LedgerEntry } from '../billing/ledger.ts';

/** A card top-up (DESIGN §15): started by a customer as a Checkout Session, credited when the vendor says it is paid. */
export interface Payment {
  id: string;
  /** The vendor's Checkout Session id (`cs_…`). */
  sessionId: string;
  account: AccountRef;
  /** Who started it. */
  userId: string;
  amount: Money;
  /** The same amount in the currency's smallest unit, as the vendor counts it. */
  minorAmount: number;
  /** ISO 4217, lower case, as the vendor writes it. */
  currency: string;
  status: 'pending' | 'paid' | 'expired';
  paymentIntent: string | null;
  /** Refunded so far, in the smallest unit (the vendor's `amount_refunded` is cumulative). */
  refundedMinor: number;
  /** The dispute that was lost, if one was: it has been debited. */
  lostDispute: string | null;
  createdAt: number;
  paidAt: number | null;
}

export interface PaymentQuery {
  account?: AccountRef;
  limit: number;
  cursor?: string;
}

/** What a settlement does to a payment found (locked) by the repository: the new state and the ledger entries, or nothing. */
export type Settlement = { changes: Partial<Pick<Payment, 'status' | 'paymentIntent' | 'refundedMinor' | 'lostDispute' | 'paidAt'>>; entries: LedgerEntry[] } | undefined;

export interface PaymentsRepository {
  insert(payment: Payment): Promise<void>;
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
}

/** The fields of the vendor's events the gateway acts on. */
export type VendorEvent =
  | { type: 'checkout.completed'; id: string; sessionId: string; paymentId: string | null; paid: boolean; minorAmount: number | null; currency: string | null; paymentIntent: string | null }
  | { type: 'checkout.expired'; id: string; sessionId: string; paymentId: string | null }
  | { type: 'charge.refunded'; id: string; chargeId: string; paymentIntent: string | null; paymentId: string | null; refundedMinor: number; currency: string }
  | { type: 'dispute.lost'; id: string; disputeId: string; paymentIntent: string | null; minorAmount: number; currency: string }
  | { type: 'other'; id: string; vendorType: string };
