import assert from 'node:assert/strict';
import { micros, type TestGateway } from './gateway.ts';
import { charges, ledger, type LedgerRow } from './e2e.ts';

/**
 * Shared pieces of the compatibility suite (test/clients/*): a fresh funded account per scenario, a fetch that records every
 * HTTP call a real client library makes, and the billing check — one request-log row and exactly one ledger charge per call,
 * with tokens, and the row's cost equal to its charge.
 */

/** The OpenAI model and the Claude model every client is tried on. */
export const OPENAI_MODEL = 'gpt-4o-mini';
export const CLAUDE_MODEL = 'claude-sonnet-4-5';

/** The function tool every client declares; the simulator calls the first tool with `{"city":"sample"}` (json-sample.ts). */
export const WEATHER_TOOL: { name: string; description: string; parameters: { type: 'object'; properties: Record<string, { type: string }>; required: string[]; additionalProperties: false } } = {
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};
export const WEATHER_ARGUMENTS = { city: 'sample' };
/** What the tool "returns"; the simulator answers `Tool result received: <first 60 chars>` (text.ts). */
export const WEATHER_RESULT = 'Sunny, 21 degrees';

/** The variable holding the Tollgate key in the Codex CLI's environment, as `env_key` names it. */
export const CODEX_KEY_VARIABLE = 'TOLLGATE_API_KEY';

/**
 * The Codex CLI's config.toml of the README: a `tollgate` model provider on the Responses API, Codex's defaults otherwise, for
 * OpenAI and Claude models alike (for Claude the gateway flattens Codex's `namespace` tools and skips its hosted `web_search`;
 * docs/api.md, Responses API).
 */
export function codexConfig(gatewayUrl: string, model: string): string {
  const lines = [
    `model = "${model}"`,
    'model_provider = "tollgate"',
    '',
    '[model_providers.tollgate]',
    'name = "Tollgate"',
    `base_url = "${gatewayUrl}/v1"`,
    `env_key = "${CODEX_KEY_VARIABLE}"`,
    'wire_api = "responses"',
  ];
  return `${lines.join('\n')}\n`;
}

export interface RecordedCall {
  method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  path: string;
  status: number;
  /** The gateway's `x-request-id`: the request-log row and the ledger charge carry it. */
  requestId: string | null;
}

/** A `fetch` that forwards to the real one and records each call (the clients take it as their `fetch` option). */
export interface CountingFetch {
  (input: string | URL | Request, init?: RequestInit): Promise<Response>;
  calls: RecordedCall[];
}

export function countingFetch(): CountingFetch {
  const calls: RecordedCall[] = [];
  const counted = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? (input instanceof Request ? input.method : 'GET');
    const response = await fetch(input, init);
    calls.push({ method, path: `${url.pathname}${url.search}`, status: response.status, requestId: response.headers.get('x-request-id') });
    return response;
  };
  return Object.assign(counted, { calls });
}

export interface CompatAccount {
  key: string;
  userId: string;
  fetch: CountingFetch;
}

/** A new user with a balance of 10.00 and one inference key, so each scenario reads only its own log and ledger. */
export async function freshAccount(gateway: TestGateway): Promise<CompatAccount> {
  const { key, userId } = await gateway.fundedKey({ balance: '10.00' });
  return { key, userId, fetch: countingFetch() };
}

export interface RequestLogRow {
  id: string;
  endpoint: string;
  model: string | null;
  status: number;
  stream: boolean;
  input_tokens: number;
  output_tokens: number;
  cost: string;
}

/** Waits for the request log's and the ledger's writers, as the request-log suite does. */
export async function settle(gateway: TestGateway): Promise<void> {
  await gateway.app.services.requestLog.idle();
  await gateway.app.services.book.flush();
  await gateway.app.services.requestLog.flush();
}

export async function requestLog(gateway: TestGateway, userId: string): Promise<RequestLogRow[]> {
  const response = await gateway.admin<{ data: RequestLogRow[] }>('GET', `/requests?userId=${userId}&limit=100`);
  assert.equal(response.status, 200, `reading the request log: ${JSON.stringify(response.body)}`);
  return response.body.data;
}

export interface BillingExpectation {
  /** How many HTTP calls the client should have made (a tool round trip is two). */
  calls: number;
  /** Request-log endpoint name of every call (`chat.completions`, `messages`, `responses`, `embeddings`, …). */
  endpoint: string;
  model: string;
  stream: boolean;
  /** Output tokens are expected (chat, messages, responses); embeddings and moderations have none. */
  outputTokens?: boolean;
}

/**
 * The acceptance check of every scenario: the client made `calls` calls (as its counting fetch saw them, or as given for a
 * client that is a separate program), each answered 200 with a request id; the request log
 * has exactly those rows (tokens > 0, status 200); the ledger has exactly one charge per row, for the row's cost; the balance
 * went down by the sum. Returns the rows, oldest first.
 */
export async function assertBilledOncePerCall(
  gateway: TestGateway,
  account: Pick<CompatAccount, 'userId'>,
  expected: BillingExpectation,
  calls: readonly RecordedCall[] = (account as CompatAccount).fetch.calls,
): Promise<RequestLogRow[]> {
  assert.equal(calls.length, expected.calls, `the client made ${expected.calls} HTTP call(s): ${JSON.stringify(calls)}`);
  for (const call of calls) {
    assert.equal(call.status, 200, `every call succeeded: ${JSON.stringify(call)}`);
    assert.ok(call.requestId, `every answer carries x-request-id: ${JSON.stringify(call)}`);
  }
  await settle(gateway);
  const rows = (await requestLog(gateway, account.userId)).reverse();
  assert.deepEqual(rows.map((row) => row.id).sort(), calls.map((call) => call.requestId).sort(), 'one request-log row per HTTP call, with its request id');
  const charged: LedgerRow[] = charges(await ledger(gateway, { userId: account.userId }));
  assert.equal(charged.length, expected.calls, `exactly one charge per call: ${JSON.stringify(charged)}`);
  for (const row of rows) {
    assert.equal(row.endpoint, expected.endpoint, `row ${row.id} endpoint`);
    assert.equal(row.model, expected.model, `row ${row.id} model`);
    assert.equal(row.status, 200, `row ${row.id} status`);
    assert.equal(row.stream, expected.stream, `row ${row.id} stream`);
    assert.ok(row.input_tokens > 0, `row ${row.id} has input tokens: ${JSON.stringify(row)}`);
    if (expected.outputTokens ?? true) assert.ok(row.output_tokens > 0, `row ${row.id} has output tokens: ${JSON.stringify(row)}`);
    const own = charged.filter((entry) => entry.requestId === row.id);
    assert.equal(own.length, 1, `row ${row.id} is charged exactly once`);
    assert.ok(micros(row.cost) > 0n, `row ${row.id} costs something`);
    assert.equal(-micros(String(own[0]!.amount)), micros(row.cost), `row ${row.id}: the log's cost is the ledger's charge`);
  }
  const spent = rows.reduce((total, row) => total + micros(row.cost), 0n);
  assert.equal(micros(await gateway.balance({ userId: account.userId })), micros('10.00') - spent, 'the balance fell by exactly the logged costs');
  return rows;
}
