import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { readRaw, type RawResponse } from './e2e.ts';

export type { RawResponse };
import { micros, type TestGateway } from './gateway.ts';

/** Shared pieces of the messages-endpoint suites: SDK client, raw HTTP, SSE frames, shape B, prices, the ledger. */

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null && !Array.isArray(value);

export function asRecord(value: unknown, what = 'value'): JsonRecord {
  if (!isRecord(value)) throw new Error(`${what} is not a JSON object: ${JSON.stringify(value)}`);
  return value;
}

/** The official SDK pointed at the gateway; no retries, so every status reaches the test as sent. */
export function anthropicClient(gateway: TestGateway, key: string): Anthropic {
  return new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, timeout: 20_000 });
}

/** A raw POST to the messages endpoint; the key goes in `x-api-key` unless `bearer` is set. */
export async function postMessages(
  gateway: TestGateway,
  body: unknown,
  options: { key?: string; bearer?: boolean; headers?: Record<string, string>; path?: string } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.key !== undefined) {
    if (options.bearer) headers.authorization = `Bearer ${options.key}`;
    else headers['x-api-key'] = options.key;
  }
  const response = await fetch(`${gateway.url}${options.path ?? '/v1/messages'}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return readRaw(response);
}

export interface SseEvent {
  event: string;
  data: JsonRecord;
}

/** Parses a whole `text/event-stream` body into named events with JSON data (comments and blank lines skipped). */
export function sseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: asRecord(JSON.parse(data.join('\n')), `data of ${event}`) });
  }
  return events;
}

/** Asserts SPEC 2.10 shape B (the vendor's own error format) and returns the error object. */
export function errorB(body: unknown): { type: string; message: string } {
  const record = asRecord(body, 'error body');
  assert.equal(record.type, 'error', `shape B has type "error": ${JSON.stringify(body)}`);
  for (const field of Object.keys(record)) assert.ok(['type', 'error', 'request_id'].includes(field), `unexpected field ${field} in shape B`);
  const error = asRecord(record.error, 'error');
  assert.deepEqual(Object.keys(error).sort(), ['message', 'type'], `shape B error has exactly type and message: ${JSON.stringify(body)}`);
  assert.equal(typeof error.type, 'string');
  assert.equal(typeof error.message, 'string');
  return { type: error.type as string, message: error.message as string };
}

/** Every value stored under `key` anywhere inside a JSON value. */
export function valuesOfKey(value: unknown, key: string): unknown[] {
  const found: unknown[] = [];
  const walk = (item: unknown): void => {
    if (Array.isArray(item)) item.forEach(walk);
    else if (isRecord(item)) {
      for (const [name, inner] of Object.entries(item)) {
        if (name === key) found.push(inner);
        walk(inner);
      }
    }
  };
  walk(value);
  return found;
}

/** Prices per 1,000 tokens as decimal text (the catalog's `cost_context` / `cost_completion`). */
export interface Prices {
  input: string;
  output: string;
}

export function catalogPrices(id: string): Prices {
  const catalog = asRecord(JSON.parse(readFileSync(new URL('../../catalog/models.json', import.meta.url), 'utf8')));
  const entry = (catalog.models as unknown[]).map((model) => asRecord(model)).find((model) => model.id === id);
  if (!entry) throw new Error(`${id} is not in the shipped catalog`);
  return { input: String(entry.cost_context), output: String(entry.cost_completion) };
}

/** Decimal text → nano-units (10⁻⁹), exact. */
function nanos(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}

/** Vendor usage counts as the Messages API reports them (`input_tokens` excludes cached tokens). */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
}

/** Σ tokens × price-per-1k (nano-units), rounded half up once to micro-units. */
const roundedMicros = (parts: ReadonlyArray<readonly [number, bigint]>): bigint => {
  const scaled = parts.reduce((sum, [tokens, price]) => sum + BigInt(tokens) * price, 0n); // nano-units × 1000
  return (scaled + 500_000n) / 1_000_000n;
};

/**
 * The exact charge (micro-units) of a Messages call from its usage: input at the input price, cache reads at 0.1×,
 * 5-minute writes at 1.25×, 1-hour writes at 2× (DESIGN §5, PROTOCOLS 1.11); prompt and completion each rounded once.
 */
export function messagesCostMicros(prices: Prices, usage: MessagesUsage): bigint {
  const input = nanos(prices.input);
  const written = usage.cache_creation_input_tokens ?? 0;
  const written1h = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const prompt = roundedMicros([
    [usage.input_tokens, input],
    [usage.cache_read_input_tokens ?? 0, input / 10n],
    [written - written1h, (input * 125n) / 100n],
    [written1h, input * 2n],
  ]);
  return prompt + roundedMicros([[usage.output_tokens, nanos(prices.output)]]);
}

export interface LedgerRow {
  amount: string;
  kind: string;
  requestId: string | null;
  model: string | null;
}

export async function ledger(gateway: TestGateway, account: { userId?: string; orgId?: string }): Promise<LedgerRow[]> {
  const query = account.userId ? `userId=${account.userId}` : `orgId=${account.orgId}`;
  const response = await gateway.admin<{ data: LedgerRow[] }>('GET', `/ledger?${query}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.data;
}

export const chargeRows = async (gateway: TestGateway, account: { userId?: string; orgId?: string }): Promise<LedgerRow[]> =>
  (await ledger(gateway, account)).filter((row) => row.kind === 'charge');

/**
 * The one charge booked for a request (by the `x-request-id` the gateway answered with), as positive micro-units.
 * Polls briefly: a stream's charge is booked when its relay ends.
 */
export async function chargeOf(gateway: TestGateway, account: { userId?: string; orgId?: string }, requestId: string | null): Promise<{ micros: bigint; row: LedgerRow }> {
  assert.ok(requestId, 'the response carries x-request-id');
  const deadline = Date.now() + 3_000;
  for (;;) {
    const rows = (await chargeRows(gateway, account)).filter((row) => row.requestId === requestId);
    if (rows.length > 0) {
      assert.equal(rows.length, 1, `one ledger entry per request: ${JSON.stringify(rows)}`);
      const row = rows[0]!;
      return { micros: -micros(row.amount), row };
    }
    if (Date.now() > deadline) throw new Error(`no charge booked for request ${requestId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const balanceMicros = async (gateway: TestGateway, account: { userId?: string; orgId?: string }): Promise<bigint> => micros(await gateway.balance(account));
