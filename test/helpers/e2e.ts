import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { micros, type TestGateway } from './gateway.ts';

/** Shared pieces of the end-to-end suites: an SDK client, catalog prices, exact costs, the ledger, raw HTTP and SSE. */

export type JsonRecord = Record<string, unknown>;

export const isRecord = (value: unknown): value is JsonRecord => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Narrows or fails the test with a readable message. */
export function asRecord(value: unknown, what = 'value'): JsonRecord {
  if (!isRecord(value)) throw new Error(`${what} is not a JSON object: ${JSON.stringify(value)}`);
  return value;
}

export function asArray(value: unknown, what = 'value'): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${what} is not an array: ${JSON.stringify(value)}`);
  return value;
}

/** The official SDK pointed at the gateway; retries off so every status reaches the test as it was sent. */
export function openAiClient(gateway: TestGateway, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: gateway.openAiBaseUrl, maxRetries: 0, timeout: 20_000 });
}

interface CatalogEntry {
  id: string;
  /** What the vendor is asked for; defaults to `id`. */
  upstreamModel?: string;
  cost_context: string;
  cost_completion: string;
  deprecated_at: string | null;
  deprecation_redirect_to: string | null;
}

const CATALOG_PATH = fileURLToPath(new URL('../../catalog/models.json', import.meta.url));

/** An entry of the shipped catalog (prices per 1,000 tokens). */
export function catalogEntry(id: string): CatalogEntry {
  const parsed = asRecord(JSON.parse(readFileSync(CATALOG_PATH, 'utf8')), 'catalog');
  for (const model of asArray(parsed.models, 'catalog models')) {
    const entry = asRecord(model);
    if (entry.id === id) return entry as unknown as CatalogEntry;
  }
  throw new Error(`model ${id} is not in the shipped catalog`);
}

/**
 * Cost in micro-units of `tokens` at `pricePer1k` (decimal text per 1,000 tokens), rounded half up to a micro-unit —
 * each of prompt and completion is rounded on its own and the total is their sum (DESIGN §5: usage shows 6 decimals).
 */
export function tokensCostMicros(tokens: number, pricePer1k: string): bigint {
  const [whole = '0', fraction = ''] = pricePer1k.split('.');
  const priceNanos = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
  const scaled = BigInt(tokens) * priceNanos; // nano-units × 1000
  return (scaled + 500_000n) / 1_000_000n;
}

export interface UsageCounts {
  prompt_tokens: number;
  completion_tokens?: number;
}

/** Expected prompt, completion and total cost (micro-units) of a usage at a catalog model's prices. */
export function expectedCost(modelId: string, usage: UsageCounts): { prompt: bigint; completion: bigint; total: bigint } {
  const entry = catalogEntry(modelId);
  const prompt = tokensCostMicros(usage.prompt_tokens, entry.cost_context);
  const completion = tokensCostMicros(usage.completion_tokens ?? 0, entry.cost_completion);
  return { prompt, completion, total: prompt + completion };
}

export interface LedgerRow {
  id: string;
  amount: string;
  kind: string;
  requestId: string | null;
  model: string | null;
  description: string;
  createdAt: string;
}

export async function ledger(gateway: TestGateway, account: { userId?: string; orgId?: string }): Promise<LedgerRow[]> {
  const query = account.userId ? `userId=${account.userId}` : `orgId=${account.orgId}`;
  const response = await gateway.admin<{ data: LedgerRow[] }>('GET', `/ledger?${query}`);
  if (response.status !== 200) throw new Error(`reading the ledger failed: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export const charges = (rows: readonly LedgerRow[]): LedgerRow[] => rows.filter((row) => row.kind === 'charge');

/** Polls until `check` returns a value other than undefined (charges of cut streams are booked after the response). */
export async function waitFor<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const balanceMicros = async (gateway: TestGateway, account: { userId?: string; orgId?: string }): Promise<bigint> => micros(await gateway.balance(account));

export interface RawResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed body, or undefined when it is not JSON. */
  json: unknown;
}

/** A raw POST, for checking status, headers and bodies byte for byte. */
export async function postRaw(
  gateway: TestGateway,
  path: string,
  options: { key?: string | undefined; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(options.headers ?? {}) };
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers,
    body: options.rawBody ?? JSON.stringify(options.body ?? {}),
  });
  return readRaw(response);
}

/** A response as tests read it: status, headers, the body's text and its JSON (undefined when it is not JSON). */
export async function readRaw(response: Response): Promise<RawResponse> {
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** The `data:` payloads of a whole server-sent-events body, in order. */
export function sseData(text: string): string[] {
  const payloads: string[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const lines = block.split(/\r?\n/).filter((line) => line.startsWith('data:'));
    if (lines.length > 0) payloads.push(lines.map((line) => line.slice(5).replace(/^ /, '')).join('\n'));
  }
  return payloads;
}

/** The JSON frames of a chat-completions stream (everything but `[DONE]`). */
export function sseJsonFrames(text: string): JsonRecord[] {
  return sseData(text)
    .filter((payload) => payload !== '[DONE]')
    .map((payload) => asRecord(JSON.parse(payload), 'stream frame'));
}

/** Shape A of SPEC 2.10, narrowed. */
export function errorA(body: unknown): { message: string; type: string; param: string | null; code: string | null } {
  const error = asRecord(asRecord(body, 'error body').error, 'error');
  const { message, type, param, code } = error;
  if (typeof message !== 'string' || typeof type !== 'string') throw new Error(`not a shape A error: ${JSON.stringify(body)}`);
  if (param !== null && typeof param !== 'string') throw new Error(`param is neither string nor null: ${JSON.stringify(body)}`);
  if (code !== null && typeof code !== 'string') throw new Error(`code is neither string nor null: ${JSON.stringify(body)}`);
  return { message, type, param, code };
}

/** Creates a user with an org they own and funds both; returns the ids. */
export async function userWithOrg(gateway: TestGateway, balances: { user: string; org: string }): Promise<{ userId: string; orgId: string }> {
  const user = await gateway.admin<{ id: string }>('POST', '/users', { name: 'org owner', balance: balances.user });
  if (user.status !== 200) throw new Error(`creating a user failed: ${JSON.stringify(user.body)}`);
  const org = await gateway.admin<{ id: string }>('POST', '/orgs', { name: 'Acme', ownerId: user.body.id, balance: balances.org });
  if (org.status !== 200) throw new Error(`creating an org failed: ${JSON.stringify(org.body)}`);
  return { userId: user.body.id, orgId: org.body.id };
}
