import assert from 'node:assert/strict';
import { startSimulator, type Simulator } from '../../simulator/server.ts';
import { postRaw, type JsonRecord, type RawResponse } from './e2e.ts';
import { micros, type TestGateway } from './gateway.ts';

/** A simulator standing in for one vendor endpoint (one channel), recording enough requests for the weight runs. */
export const startChannelSimulator = (port = 0): Promise<Simulator> => startSimulator({ port, recordLimit: 10_000 });

/** Chat requests a simulator received (what a channel served, counted at the vendor). */
export const chatCalls = (simulator: Simulator): number => simulator.requests.filter((request) => request.path === '/v1/chat/completions').length;

export interface ChannelSpec {
  id: string;
  simulator: Simulator;
  weight?: number;
  priority?: number;
  models?: string[];
}

/** Puts an OpenAI-format provider with these channels and a chat model on it (prices per 1,000 tokens). */
export async function putPool(gateway: TestGateway, provider: string, channels: readonly ChannelSpec[], model: { id: string; cost_context?: string; cost_completion?: string; fallbacks?: string[] }): Promise<void> {
  const put = await gateway.admin('PUT', `/providers/${provider}`, {
    type: 'openai',
    channels: channels.map((channel) => ({
      id: channel.id,
      baseUrl: `${channel.simulator.url}/v1`,
      apiKey: `sk-${provider}-${channel.id}`,
      ...(channel.weight !== undefined ? { weight: channel.weight } : {}),
      ...(channel.priority !== undefined ? { priority: channel.priority } : {}),
      ...(channel.models ? { models: channel.models } : {}),
    })),
  });
  assert.equal(put.status, 200, JSON.stringify(put.body));
  const { id, ...fields } = model;
  const modelPut = await gateway.admin('PUT', `/models/${id}`, { kind: 'chat', provider, upstreamModel: 'gpt-4o-mini', cost_context: '0.0010', cost_completion: '0.0020', ...fields });
  assert.equal(modelPut.status, 200, JSON.stringify(modelPut.body));
}

export const ask = (model: string, text = 'hello channels', extra: JsonRecord = {}): JsonRecord => ({ model, messages: [{ role: 'user', content: text }], ...extra });

export const chat = (gateway: TestGateway, key: string, body: JsonRecord): Promise<RawResponse> => postRaw(gateway, '/v1/chat/completions', { key, body });

/** Runs `count` calls, `concurrency` at a time. */
export async function inParallel(count: number, concurrency: number, call: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await call(next++);
    }),
  );
}

export interface ChannelView {
  id: string;
  weight: number;
  priority: number;
  hasApiKey: boolean;
  health: { state: string; requests: number; errors: number; errorRate: number; latencyMs: { p50: number | null; p99: number | null }; coolingUntil: string | null };
}

export async function channelHealth(gateway: TestGateway, provider: string): Promise<Map<string, ChannelView['health']>> {
  const response = await gateway.admin<{ channels: ChannelView[] }>('GET', `/providers/${provider}`);
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return new Map(response.body.channels.map((channel) => [channel.id, channel.health]));
}

export interface RequestRow {
  id: string;
  model: string | null;
  servedModel: string | null;
  provider: string | null;
  channel: string | null;
  attempts: number;
  status: number;
  cost: string;
  stream: boolean;
}

/** The request log of a user as the operator reads it (newest first), after pending rows are written. */
export async function requestRows(gateway: TestGateway, userId: string): Promise<RequestRow[]> {
  await gateway.app.services.requestLog.idle();
  const rows: RequestRow[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; body: { data: RequestRow[]; next_cursor: string | null } } = await gateway.admin('GET', `/requests?userId=${userId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    rows.push(...page.body.data);
    cursor = page.body.next_cursor;
  } while (cursor);
  return rows;
}

/**
 * Exactly-once money: no request has two charges, the balance equals what was credited plus the sum of the ledger, and
 * each request's log cost equals its ledger charge. Returns the charges by request id (micro-units).
 */
export async function assertChargedOnce(gateway: TestGateway, userId: string, rows: readonly RequestRow[]): Promise<Map<string, bigint>> {
  await gateway.app.services.book.flush();
  const entries = await gateway.storage.db
    .selectFrom('ledger')
    .select(['request_id', 'kind', 'amount_nano'])
    .where('account_id', '=', userId)
    .execute();
  let sum = 0n;
  const charges = new Map<string, bigint>();
  for (const entry of entries) {
    const amount = BigInt(String(entry.amount_nano));
    sum += amount;
    if (entry.kind !== 'charge' || entry.request_id === null) continue;
    assert.ok(!charges.has(entry.request_id), `request ${entry.request_id} was charged twice`);
    charges.set(entry.request_id, -amount / 1000n);
  }
  assert.equal(micros(await gateway.balance({ userId })) * 1000n, sum, 'balance = Σ ledger');
  for (const row of rows) assert.equal(micros(row.cost), charges.get(row.id) ?? 0n, `request ${row.id}: log cost = ledger charge`);
  return charges;
}
