import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

/**
 * A local MCP server built with the official SDK (Streamable HTTP, stateless, node:http on 127.0.0.1). Its tools, in
 * this order: `get_fact({topic})` answers `fact`; `fail()` reports a tool error; `hidden_tool()` exists to be filtered
 * out by `allowedTools`.
 */
export interface TestMcpServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** Headers of every HTTP request received. */
  headers: IncomingHttpHeaders[];
  /** Every tool call received: tool name and arguments. */
  calls: Array<{ tool: string; args: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startMcpServer(fact: string): Promise<TestMcpServer> {
  const headers: IncomingHttpHeaders[] = [];
  const calls: TestMcpServer['calls'] = [];

  const build = (): McpServer => {
    const server = new McpServer({ name: 'test-facts', version: '1.0.0' });
    server.registerTool(
      'get_fact',
      { description: 'Returns the secret fact about a topic.', inputSchema: { topic: z.string().describe('What the fact is about') } },
      async ({ topic }) => {
        calls.push({ tool: 'get_fact', args: { topic } });
        return { content: [{ type: 'text', text: `The fact about ${topic}: ${fact}` }] };
      },
    );
    server.registerTool('fail', { description: 'Always fails.' }, async () => {
      calls.push({ tool: 'fail', args: {} });
      return { content: [{ type: 'text', text: 'the backend is down' }], isError: true };
    });
    server.registerTool('hidden_tool', { description: 'Never offered when allowedTools lists others.' }, async () => {
      calls.push({ tool: 'hidden_tool', args: {} });
      return { content: [{ type: 'text', text: 'hidden' }] };
    });
    return server;
  };

  const http = createServer((request, response) => {
    headers.push(request.headers);
    if (request.method !== 'POST') {
      response.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void server.close();
    });
    server
      .connect(transport)
      .then(() => transport.handleRequest(request, response))
      .catch(() => {
        if (!response.headersSent) response.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    headers,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
