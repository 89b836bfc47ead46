import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { silentLogger, testAssistant, testToolContext } from '../../../../test/helpers/assistant-fixture.ts';
import { startMcpServer, type TestMcpServer } from '../../../../test/helpers/mcp-server.ts';
import type { ApiFunction, McpServer } from '../assistant.ts';
import { renderMcpResult } from './mcp-result-text.ts';
import { McpToolsetFactory, mcpToolName, type McpToolsetOptions } from './mcp-toolset.ts';
import type { Toolset } from './toolset.ts';

const FACT = 'the lighthouse keeper owns 41 teal umbrellas';
let mcp: TestMcpServer;
let silent: Server;
let silentUrl: string;

before(async () => {
  mcp = await startMcpServer(FACT);
  // Accepts connections and never answers: a server that hangs.
  silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
});
after(async () => {
  await mcp.close();
  silent.closeAllConnections();
  silent.close();
});

async function open(servers: McpServer[], options: Partial<McpToolsetOptions> = {}, apiFunctions: ApiFunction[] = []): Promise<Toolset> {
  const factory = new McpToolsetFactory({ allowPrivateUrls: true, logger: silentLogger, ...options });
  const toolset = await factory.open(testAssistant({ mcp: servers, apiFunctions }));
  assert.ok(toolset);
  return toolset;
}

test('tool names are <server>__<tool> in the OpenAI charset, at most 64 characters, unique', () => {
  const taken = new Set(['docs__search']);
  assert.equal(mcpToolName('docs', 'search', taken), 'docs__search_2');
  assert.equal(mcpToolName('docs', 'search', taken), 'docs__search_3');
  assert.equal(mcpToolName('mcp1', 'files.read/v2 ü', taken), 'mcp1__files_read_v2__');
  const long = mcpToolName('server', 'x'.repeat(80), taken);
  assert.equal(long.length, 64);
  assert.equal(mcpToolName('server', 'x'.repeat(80), taken), `${'server__'}${'x'.repeat(54)}_2`);
  for (const name of taken) assert.match(name, /^[a-zA-Z0-9_-]{1,64}$/);
});

test('results: text items joined, other items summarized, structured content as JSON, errors marked, capped', () => {
  assert.equal(renderMcpResult({ content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }), 'one\ntwo');
  assert.equal(
    renderMcpResult({ content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inline' } }, { type: 'resource_link', uri: 'https://x.example/r', name: 'report' }] }),
    '[image: image/png, 8 bytes]\ninline\n[resource link: report <https://x.example/r>]',
  );
  assert.equal(renderMcpResult({ content: [], structuredContent: { total: 3 } }), '{"total":3}');
  assert.equal(renderMcpResult({ content: [{ type: 'text', text: 'bad input' }], isError: true }), 'Error: bad input');
  assert.equal(renderMcpResult({ content: [] }), '(the tool returned no content)');
  assert.match(renderMcpResult({ content: [{ type: 'text', text: 'y'.repeat(30_000) }] }), /\[truncated: the result had 30000 characters, the first 20000 are shown\]$/);
});

test("a server's tools are offered with their input schemas and called through the SDK client", async () => {
  const from = mcp.headers.length;
  const toolset = await open([{ url: mcp.url, name: 'facts', headers: { 'X-Api-Key': 'mcp-secret' } }]);
  try {
    assert.deepEqual(toolset.definitions.map((definition) => definition.name), ['facts__get_fact', 'facts__fail', 'facts__hidden_tool']);
    const getFact = toolset.definitions[0];
    assert.equal(getFact?.description, 'Returns the secret fact about a topic.');
    assert.equal(getFact?.parameters.type, 'object');
    assert.deepEqual(getFact?.parameters.required, ['topic']);
    assert.deepEqual((getFact?.parameters.properties as Record<string, unknown>).topic, { type: 'string', description: 'What the fact is about' });
    assert.equal(await toolset.systemContext?.(testToolContext()), undefined);

    assert.equal(await toolset.call('facts__get_fact', { topic: 'lighthouse' }, testToolContext()), `The fact about lighthouse: ${FACT}`);
    assert.deepEqual(mcp.calls.at(-1), { tool: 'get_fact', args: { topic: 'lighthouse' } });
    assert.equal(await toolset.call('facts__fail', {}, testToolContext()), 'Error: the backend is down');
    assert.match(await toolset.call('facts__get_fact', { topic: 42 }, testToolContext()), /^Error: /);
    assert.equal(await toolset.call('facts__nothing', {}, testToolContext()), 'Error: there is no tool named facts__nothing.');
    assert.ok(mcp.headers.slice(from).every((headers) => headers['x-api-key'] === 'mcp-secret'), 'configured headers on every request');
  } finally {
    await toolset.close();
  }
});

test('allowedTools limits the offer; unnamed servers are mcp1, mcp2…; names taken by API functions are avoided', async () => {
  const taken: ApiFunction = { name: 'mcp2__get_fact', description: '', parameters: {}, url: 'https://example.com', method: 'POST' };
  const toolset = await open([{ url: mcp.url, allowedTools: ['get_fact'] }, { url: mcp.url, allowedTools: ['get_fact', 'fail'] }], {}, [taken]);
  try {
    assert.deepEqual(toolset.definitions.map((definition) => definition.name), ['mcp1__get_fact', 'mcp2__get_fact_2', 'mcp2__fail']);
    assert.match(await toolset.call('mcp2__get_fact_2', { topic: 'x' }, testToolContext()), /teal umbrellas/);
  } finally {
    await toolset.close();
  }
});

test('servers that are unreachable, hang or point to private addresses are skipped; the others work', async () => {
  const started = Date.now();
  const toolset = await open([{ url: 'http://127.0.0.1:9/mcp', name: 'down' }, { url: silentUrl, name: 'hangs' }, { url: mcp.url, name: 'facts', allowedTools: ['get_fact'] }], { connectTimeoutMs: 500 });
  try {
    assert.ok(Date.now() - started < 3_000, 'a hanging server costs at most the connect timeout');
    assert.deepEqual(toolset.definitions.map((definition) => definition.name), ['facts__get_fact']);
    assert.equal(await toolset.systemContext?.(testToolContext()), '2 of your MCP tool servers could not be reached for this message; their tools are unavailable.');
  } finally {
    await toolset.close();
  }

  const from = mcp.headers.length;
  const guarded = await open([{ url: mcp.url, name: 'facts' }], { allowPrivateUrls: false });
  assert.deepEqual(guarded.definitions, []);
  assert.equal(mcp.headers.length, from, 'the private server got no request');
  await guarded.close();
});

test('no toolset for an assistant without MCP servers', async () => {
  assert.equal(await new McpToolsetFactory({ allowPrivateUrls: true, logger: silentLogger }).open(testAssistant()), undefined);
});
