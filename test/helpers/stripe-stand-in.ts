import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A Checkout Session as the stand-in made it, with the form fields the gateway sent. */
export interface StandInSession {
  id: string;
  fields: Record<string, string>;
  idempotencyKey: string | undefined;
  authorization: string | undefined;
}

/**
 * A local stand-in of the Stripe API for the payments tests (the `stripe` package takes a host, port and protocol): it answers
 * `POST /v1/checkout/sessions` as Stripe does — a form-encoded request, a `checkout.session` object — and records what it got.
 * Replays of one Idempotency-Key answer the first session again, as Stripe does.
 */
export interface StripeStandIn {
  url: string;
  sessions: StandInSession[];
  /** Answer the next `times` checkouts with this status (a vendor outage). */
  failNext(status: number, times?: number): void;
  close(): Promise<void>;
}

export async function startStripeStandIn(): Promise<StripeStandIn> {
  const sessions: StandInSession[] = [];
  const byIdempotencyKey = new Map<string, Record<string, unknown>>();
  let failure: number | undefined;
  let failures = 0;
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${randomBytes(6).toString('hex')}` });
        response.end(JSON.stringify(body));
      };
      if (request.method !== 'POST' || request.url !== '/v1/checkout/sessions') {
        send(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${request.method}: ${request.url}).` } });
        return;
      }
      if (failure !== undefined && failures > 0) {
        const status = failure;
        failures -= 1;
        send(status, { error: { type: 'api_error', message: 'An unknown error occurred' } });
        return;
      }
      const idempotencyKey = typeof request.headers['idempotency-key'] === 'string' ? request.headers['idempotency-key'] : undefined;
      const replay = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
      if (replay) {
        send(200, replay);
        return;
      }
      const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const id = `cs_test_${randomBytes(12).toString('hex')}`;
      sessions.push({ id, fields, idempotencyKey, authorization: request.headers.authorization });
      const unitAmount = Number(fields['line_items[0][price_data][unit_amount]']);
      const metadata = Object.fromEntries(Object.entries(fields).filter(([name]) => name.startsWith('metadata[')).map(([name, value]) => [name.slice(9, -1), value]));
      const session = {
        id,
        object: 'checkout.session',
        amount_total: unitAmount * Number(fields['line_items[0][quantity]'] ?? 1),
        currency: fields['line_items[0][price_data][currency]'],
        client_reference_id: fields.client_reference_id ?? null,
        metadata,
        mode: fields.mode,
        payment_intent: null,
        payment_status: 'unpaid',
        status: 'open',
        success_url: fields.success_url,
        cancel_url: fields.cancel_url,
        url: `https://checkout.stripe.com/c/pay/${id}`,
      };
      if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, session);
      send(200, session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    sessions,
    failNext: (status, times = 1) => {
      failure = status;
      failures = times;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
