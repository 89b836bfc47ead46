import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { JsonObject } from '../../../core/chat-types.ts';
import { guardedFetch } from '../../../lib/outbound-http.ts';
import { refuseUrl } from '../../../lib/url-guard.ts';
import type { Assistant, McpServer } from '../assistant.ts';
import { renderMcpResult } from './mcp-result-text.ts';
import { SQL_TOOL_NAME } from './sql-store-toolset.ts';
import { errorMessage } from './tool-result-text.ts';
import type { ToolContext, ToolDefinition, Toolset, ToolsetFactory } from './toolset.ts';

/** Connecting and listing the tools of one server must take less than this, or the chat goes on without it. */
export const MCP_CONNECT_TIMEOUT_MS = 5_000;
/** A tool call that takes longer answers the model with an error (below the chat's own 20 s tool limit). */
export const MCP_CALL_TIMEOUT_MS = 15_000;
/** Tools offered from all MCP servers together (OpenAI accepts 128 per request; functions and the SQL store need room). */
export const MAX_MCP_TOOLS = 64;
const MAX_DESCRIPTION_CHARS = 2_000;
/** A tool whose input schema is longer than this (as JSON) is not offered: the chatting user pays for every prompt token. */
const MAX_SCHEMA_CHARS = 16_000;
/** Pages of `tools/list` read from one server. */
const MAX_LIST_PAGES = 5;
/** How long closing waits for a server to end its session. */
const CLOSE_WAIT_MS = 1_000;

export interface McpToolsetOptions {
  allowPrivateUrls: boolean;
  logger: Logger;
  /** Overrides MCP_CONNECT_TIMEOUT_MS (tests). */
  connectTimeoutMs?: number;
}

interface Route {
  client: Client;
  server: string;
  tool: string;
}

interface Connection {
  server: string;
  client: Client;
  transport: StreamableHTTPClientTransport;
  tools: Array<{ name: string; description?: string | undefined; inputSchema: JsonObject }>;
}

/**
 * An OpenAI tool name for a server's tool: `<server>__<tool>`, characters outside `[a-zA-Z0-9_-]` replaced by `_`, at
 * most 64 characters, and `_2`, `_3`… appended when the name is taken.
 */
export function mcpToolName(server: string, tool: string, taken: Set<string>): string {
  const base = `${server}__${tool}`.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
  let name = base;
  for (let index = 2; taken.has(name); index += 1) {
    const suffix = `_${index}`;
    name = base.slice(0, 64 - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}

/**
 * `mcp`: each entry is a remote MCP server (Streamable HTTP), connected per chat turn with the official SDK client. Its
 * tools — those in `allowedTools`, or all — are offered as `<server>__<tool>`, server name `name` or `mcp1`, `mcp2`… in
 * the order of the list. A server that cannot be reached or listed in time is left out (logged, and the model is told);
 * a failing call is an error text for the model.
 */
export class McpToolsetFactory implements ToolsetFactory {
  constructor(private readonly options: McpToolsetOptions) {}

  async open(assistant: Assistant): Promise<Toolset | undefined> {
    if (assistant.mcp.length === 0) return undefined;
    const names = assistant.mcp.map((server, index) => server.name ?? `mcp${index + 1}`);
    const settled = await Promise.allSettled(assistant.mcp.map((server, index) => this.connect(server, names[index] ?? `mcp${index + 1}`)));
    const connections: Connection[] = [];
    let unavailable = 0;
    settled.forEach((result, index) => {
      if (result.status === 'fulfilled') connections.push(result.value);
      else {
        unavailable += 1;
        this.options.logger.warn({ assistant: assistant.id, server: names[index], err: errorMessage(result.reason) }, 'MCP server skipped');
      }
    });
    // Names the other toolsets of this assistant offer: an MCP tool never takes them.
    const taken = new Set<string>(assistant.apiFunctions.map((fn) => fn.name));
    if (assistant.sqlStore) taken.add(SQL_TOOL_NAME);
    return new McpToolset(connections, taken, unavailable, this.options.logger.child({ assistant: assistant.id }));
  }

  private async connect(server: McpServer, name: string): Promise<Connection> {
    const refused = await refuseUrl(server.url, this.options.allowPrivateUrls);
    if (refused) throw new Error(`its URL ${refused}`);
    const guarded = guardedFetch(this.options.allowPrivateUrls);
    // undici's own fetch, to pass the guarded dispatcher; its types are declared apart from the DOM ones the SDK names.
    const fetch: FetchLike = (url, init) => guarded(url, init as Parameters<typeof guarded>[1]) as unknown as Promise<Response>;
    // The SDK (~28 MB resident) is loaded by the first assistant that has an MCP server, not at start.
    const [{ Client }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const transport = new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers ?? {}, redirect: 'error' },
      fetch,
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
    });
    const client = new Client({ name: 'tollgate', version: '1.0.0' });
    client.onerror = (error) => this.options.logger.debug({ server: name, err: error }, 'MCP transport error');
    const timeout = this.options.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS;
    const request = { timeout, signal: AbortSignal.timeout(timeout) };
    try {
      await client.connect(transport, request);
      const allowed = server.allowedTools ? new Set(server.allowedTools) : undefined;
      const tools: Connection['tools'] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
        const listed = await client.listTools(cursor ? { cursor } : undefined, request);
        for (const tool of listed.tools) if (!allowed || allowed.has(tool.name)) tools.push({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema });
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
      return { server: name, client, transport, tools };
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
  }
}

class McpToolset implements Toolset {
  readonly definitions: readonly ToolDefinition[];
  private readonly routes = new Map<string, Route>();

  constructor(
    private readonly connections: readonly Connection[],
    taken: Set<string>,
    private readonly unavailable: number,
    private readonly logger: Logger,
  ) {
    const definitions: ToolDefinition[] = [];
    for (const connection of connections) {
      for (const tool of connection.tools) {
        if (definitions.length >= MAX_MCP_TOOLS) {
          logger.warn({ server: connection.server, tool: tool.name }, `MCP tool not offered: over ${MAX_MCP_TOOLS} tools`);
          continue;
        }
        if (JSON.stringify(tool.inputSchema).length > MAX_SCHEMA_CHARS) {
          logger.warn({ server: connection.server, tool: tool.name }, `MCP tool not offered: input schema over ${MAX_SCHEMA_CHARS} characters`);
          continue;
        }
        const name = mcpToolName(connection.server, tool.name, taken);
        this.routes.set(name, { client: connection.client, server: connection.server, tool: tool.name });
        definitions.push({
          name,
          description: (tool.description ?? '').slice(0, MAX_DESCRIPTION_CHARS),
          parameters: { ...tool.inputSchema, type: 'object', properties: tool.inputSchema.properties ?? {} },
        });
      }
    }
    this.definitions = definitions;
  }

  async systemContext(): Promise<string | undefined> {
    if (this.unavailable === 0) return undefined;
    return `${this.unavailable} of your MCP tool servers could not be reached for this message; their tools are unavailable.`;
  }

  async call(name: string, args: JsonObject, context: ToolContext): Promise<string> {
    const route = this.routes.get(name);
    if (!route) return `Error: there is no tool named ${name}.`;
    try {
      const result = await route.client.callTool({ name: route.tool, arguments: args }, undefined, { timeout: MCP_CALL_TIMEOUT_MS, signal: context.signal });
      return renderMcpResult(result);
    } catch (error) {
      this.logger.debug({ server: route.server, tool: route.tool, err: error }, 'MCP tool call failed');
      return `Error: the tool ${route.tool} of MCP server ${route.server} failed: ${errorMessage(error)}`;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled(
      this.connections.map(async (connection) => {
        // Ends the server's session (a DELETE) when it answers quickly; closing aborts what is still in flight.
        await Promise.race([connection.transport.terminateSession().catch(() => undefined), sleep(CLOSE_WAIT_MS, undefined, { ref: false })]);
        await connection.client.close();
      }),
    );
  }
}
