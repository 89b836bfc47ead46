import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { sqlStorePath } from '../src/features/assistants/tools/sql-store-toolset.ts';
import { replyText, toolResultReplyText, type RecordedRequest } from '../simulator/server.ts';
import { asArray, asRecord, type JsonRecord } from './helpers/e2e.ts';
import { json, startFunctionServer, type TestFunctionServer } from './helpers/function-server.ts';
import { startTestGateway, type TestGateway } from './helpers/gateway.ts';
import { startMcpServer, type TestMcpServer } from './helpers/mcp-server.ts';

// Assistants with MCP servers, API functions and a SQL store, end to end: the simulated model calls the FIRST tool it
// is offered with arguments sampled from its schema, then answers `Tool result received: <first 60 chars>`.

const FACT = 'the lighthouse keeper owns 41 teal umbrellas';
const ORDER_CODE = `ORD-${randomUUID().slice(0, 8)}`;

interface Chat {
  status: number;
  body: JsonRecord;
  /** Chat-completions requests the gateway sent to the simulator for this chat. */
  rounds: JsonRecord[];
}

async function post(gateway: TestGateway, key: string, path: string, body: unknown): Promise<{ status: number; body: JsonRecord }> {
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: asRecord(await response.json(), `${path} body`) };
}

async function createAssistant(gateway: TestGateway, key: string, fields: JsonRecord): Promise<JsonRecord> {
  const created = await post(gateway, key, '/v1/assistant/create', { title: 'Tools', modelId: 'gpt-4o-mini', mention: `tools-${randomUUID().slice(0, 8)}`, instruction: 'Use your tools.', ...fields });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  return created.body;
}

async function chat(gateway: TestGateway, key: string, assistant: JsonRecord, message: string): Promise<Chat> {
  const from = gateway.simulator.requests.length;
  const response = await post(gateway, key, '/v1/assistant/chat', { chatId: randomUUID(), assistantCode: assistant.mention, message });
  const rounds = gateway.simulator.requests
    .slice(from)
    .filter((request: RecordedRequest) => request.path === '/v1/chat/completions')
    .map((request) => asRecord(request.json, 'chat request'));
  return { ...response, rounds };
}

const toolNames = (round: JsonRecord | undefined): string[] =>
  round?.tools === undefined ? [] : asArray(round.tools, 'tools').map((tool) => String(asRecord(asRecord(tool).function).name));

/** The tool results the model was given in a round. */
const toolResults = (round: JsonRecord | undefined): string[] =>
  asArray(round?.messages, 'messages')
    .map((message) => asRecord(message))
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));

describe('assistant tools end to end', () => {
  let gateway: TestGateway;
  let key: string;
  let dataDir: string;
  let mcp: TestMcpServer;
  let functions: TestFunctionServer;

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'tollgate-assistant-tools-'));
    gateway = await startTestGateway({ config: { dataDir } });
    ({ key } = await gateway.fundedKey());
    mcp = await startMcpServer(FACT);
    functions = await startFunctionServer((request, response) => json(response, 200, { status: 'shipped', code: ORDER_CODE, received: JSON.parse(request.body || '{}') }));
  });
  after(async () => {
    await gateway.close();
    await mcp.close();
    await functions.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test("an MCP server's tool is offered, called, and its answer reaches the model", async () => {
    const assistant = await createAssistant(gateway, key, { mcp: [{ url: mcp.url, name: 'facts', headers: { authorization: 'Bearer mcp-token' } }] });
    const from = mcp.calls.length;
    const result = await chat(gateway, key, assistant, 'What do you know about the lighthouse?');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.rounds.length, 2);
    assert.deepEqual(toolNames(result.rounds[0]), ['facts__get_fact', 'facts__fail', 'facts__hidden_tool']);
    assert.deepEqual(mcp.calls.slice(from), [{ tool: 'get_fact', args: { topic: 'sample' } }]);
    assert.deepEqual(toolResults(result.rounds[1]), [`The fact about sample: ${FACT}`]);
    assert.equal(result.body.message, toolResultReplyText(`The fact about sample: ${FACT}`));
    assert.ok(mcp.headers.every((headers) => headers.authorization === 'Bearer mcp-token'));
  });

  test('an unreachable MCP server leaves the chat without its tools, answering normally', async () => {
    const assistant = await createAssistant(gateway, key, { mcp: [{ url: 'http://127.0.0.1:9/mcp', name: 'down' }] });
    const result = await chat(gateway, key, assistant, 'Hello there');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.rounds.length, 1);
    assert.deepEqual(toolNames(result.rounds[0]), []);
    assert.equal(result.body.message, replyText('Hello there', gateway.simulator.options.replyTokens));
    const system = asRecord(asArray(result.rounds[0]?.messages)[0]);
    assert.match(String(system.content), /1 of your MCP tool servers could not be reached/);
  });

  test("a failing MCP tool gives the model its error text, and the chat answers", async () => {
    const assistant = await createAssistant(gateway, key, { mcp: [{ url: mcp.url, name: 'facts', allowedTools: ['fail'] }] });
    const result = await chat(gateway, key, assistant, 'Try it');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.deepEqual(toolNames(result.rounds[0]), ['facts__fail']);
    assert.deepEqual(toolResults(result.rounds[1]), ['Error: the backend is down']);
    assert.equal(result.body.message, toolResultReplyText('Error: the backend is down'));
  });

  test('an API function receives the sampled arguments and its answer reaches the model', async () => {
    const assistant = await createAssistant(gateway, key, {
      apiFunctions: [
        {
          name: 'lookup_order',
          description: 'Status of an order',
          parameters: { type: 'object', properties: { orderId: { type: 'string' }, quantity: { type: 'integer' }, note: { type: 'string' } }, required: ['orderId', 'quantity'] },
          url: `${functions.url}/orders`,
          method: 'POST',
          headers: { 'X-Shop-Key': 'shop-secret' },
        },
      ],
    });
    const from = functions.requests.length;
    const result = await chat(gateway, key, assistant, 'Where is my order?');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.deepEqual(toolNames(result.rounds[0]), ['lookup_order']);
    const received = functions.requests.slice(from);
    assert.equal(received.length, 1);
    assert.equal(received[0]?.method, 'POST');
    assert.equal(received[0]?.url, '/orders');
    assert.deepEqual(JSON.parse(received[0]?.body ?? ''), { orderId: 'sample', quantity: 1 });
    assert.equal(received[0]?.headers['x-shop-key'], 'shop-secret');
    const expected = `HTTP 200\n${JSON.stringify({ status: 'shipped', code: ORDER_CODE, received: { orderId: 'sample', quantity: 1 } })}`;
    assert.deepEqual(toolResults(result.rounds[1]), [expected]);
    assert.equal(result.body.message, toolResultReplyText(expected));
  });

  test('the SQL store is offered as sql_query; each assistant gets its own database file', async () => {
    const first = await createAssistant(gateway, key, { sqlStore: true });
    const second = await createAssistant(gateway, key, { sqlStore: true });
    const result = await chat(gateway, key, first, 'Remember this');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.deepEqual(toolNames(result.rounds[0]), ['sql_query']);
    // The simulated model sends the sampled statement "sample": SQLite's answer comes back as an error text.
    assert.deepEqual(toolResults(result.rounds[1]), ['Error: near "sample": syntax error']);
    assert.equal(result.body.message, toolResultReplyText('Error: near "sample": syntax error'));
    assert.ok(existsSync(sqlStorePath(dataDir, String(first.id))));
    assert.equal(existsSync(sqlStorePath(dataDir, String(second.id))), false);

  });
});

describe('assistant tools with private URLs refused', () => {
  let gateway: TestGateway;
  let key: string;
  let functions: TestFunctionServer;
  let mcp: TestMcpServer;

  before(async () => {
    gateway = await startTestGateway({ config: { allowPrivateUrls: false } });
    ({ key } = await gateway.fundedKey());
    functions = await startFunctionServer((_request, response) => json(response, 200, { leaked: true }));
    mcp = await startMcpServer(FACT);
  });
  after(async () => {
    await gateway.close();
    await functions.close();
    await mcp.close();
  });

  test('a function on a private address is not called; the model gets an error text', async () => {
    const assistant = await createAssistant(gateway, key, {
      apiFunctions: [{ name: 'internal_admin', description: 'Internal', parameters: { type: 'object', properties: {} }, url: `${functions.url}/admin`, method: 'GET' }],
    });
    const result = await chat(gateway, key, assistant, 'Call the admin');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    const refusal = 'Error: the function internal_admin was not called: its URL must not point to a private or loopback address.';
    assert.deepEqual(toolResults(result.rounds[1]), [refusal]);
    assert.equal(functions.requests.length, 0, 'the function server got no request');
  });

  test('an MCP server on a private address is skipped', async () => {
    const assistant = await createAssistant(gateway, key, { mcp: [{ url: mcp.url, name: 'facts' }] });
    const result = await chat(gateway, key, assistant, 'Hello');
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.deepEqual(toolNames(result.rounds[0]), []);
    assert.equal(mcp.headers.length, 0, 'the MCP server got no request');
  });
});
