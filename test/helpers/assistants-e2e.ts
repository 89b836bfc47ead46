import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { countTokens, openAiPromptTokens, replyText, type RecordedRequest } from '../../simulator/server.ts';
import { asArray, asRecord, catalogEntry, tokensCostMicros, type JsonRecord } from './e2e.ts';
import type { TestGateway } from './gateway.ts';

/** Shared pieces of the assistant and chat-bot suites: raw API calls, assistants, org members and simulator checks. */

export interface ApiResponse {
  status: number;
  body: JsonRecord;
  text: string;
  headers: Headers;
}

/** A raw call of the public API with a key (`undefined`: no Authorization header). */
export async function api(gw: TestGateway, method: 'GET' | 'POST', path: string, key: string | undefined, body?: unknown): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  if (key !== undefined) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${gw.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { raw: text };
  }
  return { status: response.status, body: asRecord(parsed, `${method} ${path} body`), text, headers: response.headers };
}

/** Creates an assistant and fails the test unless it worked. */
export async function createAssistant(gw: TestGateway, key: string, fields: JsonRecord): Promise<JsonRecord> {
  const created = await api(gw, 'POST', '/v1/assistant/create', key, fields);
  assert.equal(created.status, 200, `create assistant: ${created.text}`);
  return created.body;
}

/** A chat id of SPEC 4.3 (36 characters). */
export const newChatId = (): string => randomUUID();

/** A fresh mention (unique per call). */
export const newMention = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 8)}`;

/** A user of its own, with a balance and a personal key. */
export async function newUser(gw: TestGateway, balance = '10.00', name = 'test user'): Promise<{ userId: string; key: string }> {
  const user = await gw.admin<{ id: string }>('POST', '/users', { name, balance });
  assert.equal(user.status, 200, JSON.stringify(user.body));
  const { key } = await gw.fundedKey({ userId: user.body.id });
  return { userId: user.body.id, key };
}

export async function addMember(gw: TestGateway, orgId: string, userId: string, role: 'owner' | 'admin' | 'member'): Promise<void> {
  const added = await gw.admin('POST', `/orgs/${orgId}/members`, { userId, role });
  assert.equal(added.status, 200, JSON.stringify(added.body));
}

/** The `data` items of a list or search response. */
export function items(body: JsonRecord): JsonRecord[] {
  return asArray(body.data, 'data').map((item) => asRecord(item, 'item'));
}

/** Recorded chat-completions requests to the simulator from index `from` on. */
export function chatRequests(gw: TestGateway, from = 0): RecordedRequest[] {
  return gw.simulator.requests.slice(from).filter((request) => request.path === '/v1/chat/completions');
}

/** The messages of a recorded OpenAI chat request. */
export function messagesOf(request: RecordedRequest | undefined): JsonRecord[] {
  assert.ok(request, 'the simulator received the chat request');
  return asArray(asRecord(request.json, 'request body').messages, 'messages').map((message) => asRecord(message, 'message'));
}

/** The simulator's plain reply to a user text (no tools offered). */
export const simulatedReply = (gw: TestGateway, userText: string): string => replyText(userText, gw.simulator.options.replyTokens);

/** Exact cost (micro-units) of one OpenAI-format round as the simulator counts it, at a catalog model's prices. */
export function openAiRoundCost(prices: { cost_context: string; cost_completion: string }, request: RecordedRequest, reply: string): { promptTokens: number; completionTokens: number; prompt: bigint; completion: bigint; total: bigint } {
  const promptTokens = openAiPromptTokens(asRecord(request.json, 'request body'));
  const completionTokens = countTokens(reply);
  const prompt = tokensCostMicros(promptTokens, prices.cost_context);
  const completion = tokensCostMicros(completionTokens, prices.cost_completion);
  return { promptTokens, completionTokens, prompt, completion, total: prompt + completion };
}

export const catalogPrices = (modelId: string): { cost_context: string; cost_completion: string } => {
  const entry = catalogEntry(modelId);
  return { cost_context: entry.cost_context, cost_completion: entry.cost_completion };
};
