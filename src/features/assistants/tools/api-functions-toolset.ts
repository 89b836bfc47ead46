import type { Logger } from 'pino';
import type { JsonObject } from '../../../core/chat-types.ts';
import { RefusedUrlError, sendOutbound } from '../../../lib/outbound-http.ts';
import { SEARCH_TOOL_NAME } from '../../knowledge/knowledge-toolset.ts';
import type { ApiFunction, Assistant } from '../assistant.ts';
import { SQL_TOOL_NAME } from './sql-store-toolset.ts';
import { capResultText, errorMessage } from './tool-result-text.ts';
import type { ToolContext, ToolDefinition, Toolset, ToolsetFactory } from './toolset.ts';

/** A function that has not answered completely within this time has failed (the model gets an error text). */
export const FUNCTION_TIMEOUT_MS = 10_000;
/** Response bytes read from a function; reading stops there and the text says the body was cut. */
export const MAX_RESPONSE_BYTES = 256 * 1024;

export interface ApiFunctionsOptions {
  allowPrivateUrls: boolean;
  logger: Logger;
  /** Overrides FUNCTION_TIMEOUT_MS (tests). */
  timeoutMs?: number;
  /** Overrides MAX_RESPONSE_BYTES (tests). */
  maxResponseBytes?: number;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);
/** Headers the HTTP client sets itself; an owner's value for them would break the request. */
const CLIENT_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer']);
const TEXT_TYPE = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded|yaml|x-ndjson))/i;

/**
 * `apiFunctions`: each entry is a tool of the same name. A call is an HTTP request made by the gateway — arguments as a
 * JSON body (POST, PUT, PATCH) or as query parameters (GET, DELETE) — to a URL that passes the private-address guard,
 * with the owner's headers, no redirect followed, a time limit and a response size limit. The model reads
 * `HTTP <status>\n<body>`.
 */
export class ApiFunctionsToolsetFactory implements ToolsetFactory {
  constructor(private readonly options: ApiFunctionsOptions) {}

  async open(assistant: Assistant): Promise<Toolset | undefined> {
    const functions = new Map<string, ApiFunction>();
    // Tool names are unique per request: a duplicate, or the name of the knowledge base's or SQL store's tool, is not offered.
    const taken = new Set<string>([...(assistant.database ? [SEARCH_TOOL_NAME] : []), ...(assistant.sqlStore ? [SQL_TOOL_NAME] : [])]);
    for (const fn of assistant.apiFunctions) {
      if (functions.has(fn.name) || taken.has(fn.name)) {
        this.options.logger.warn({ assistant: assistant.id, function: fn.name }, 'API function not offered: its name is taken');
        continue;
      }
      functions.set(fn.name, fn);
    }
    if (functions.size === 0) return undefined;
    return new ApiFunctionsToolset(assistant.id, functions, this.options);
  }
}

class ApiFunctionsToolset implements Toolset {
  readonly definitions: readonly ToolDefinition[];

  constructor(
    private readonly assistantId: string,
    private readonly functions: ReadonlyMap<string, ApiFunction>,
    private readonly options: ApiFunctionsOptions,
  ) {
    this.definitions = [...functions.values()].map((fn) => ({
      name: fn.name,
      description: fn.description,
      parameters: { type: 'object', properties: {}, ...fn.parameters },
    }));
  }

  async call(name: string, args: JsonObject, context: ToolContext): Promise<string> {
    const fn = this.functions.get(name);
    if (!fn) return `Error: there is no function named ${name}.`;
    const timeoutMs = this.options.timeoutMs ?? FUNCTION_TIMEOUT_MS;
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await this.send(fn, args, AbortSignal.any([timeout, context.signal]));
    } catch (error) {
      if (error instanceof RefusedUrlError) return `Error: the function ${name} was not called: its URL ${error.reason}.`;
      this.options.logger.debug({ assistant: this.assistantId, function: name, err: error }, 'API function call failed');
      if (timeout.aborted) return `Error: the function ${name} did not answer within ${timeoutMs / 1000} s.`;
      if (context.signal.aborted) return `Error: the call of ${name} was cancelled.`;
      return `Error: the function ${name} could not be called: ${errorMessage(error)}`;
    }
  }

  async close(): Promise<void> {
    // Nothing is held between calls: the dispatcher is shared and every response body is consumed or destroyed.
  }

  private async send(fn: ApiFunction, args: JsonObject, signal: AbortSignal): Promise<string> {
    const hasBody = BODY_METHODS.has(fn.method);
    const url = hasBody ? fn.url : withQuery(fn.url, args);
    const limit = this.options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    const response = await sendOutbound(
      url,
      {
        method: fn.method,
        headers: {
          'user-agent': 'Tollgate-Functions/1',
          accept: 'application/json, text/*;q=0.9, */*;q=0.5',
          ...ownerHeaders(fn.headers),
          ...(hasBody ? { 'content-type': 'application/json' } : {}),
        },
        ...(hasBody ? { body: JSON.stringify(args) } : {}),
        signal,
      },
      // The call's own timeout (with its own message) is in `signal`; the policy's is a backstop.
      { allowPrivateUrls: this.options.allowPrivateUrls, timeoutMs: (this.options.timeoutMs ?? FUNCTION_TIMEOUT_MS) + 1_000, maxResponseBytes: limit },
    );
    const bytes = response.body;
    const complete = response.complete;
    const contentType = headerText(response.headers['content-type']);
    const location = response.status >= 300 && response.status < 400 ? headerText(response.headers.location) : '';
    const lines = [`HTTP ${response.status}`];
    if (location) lines.push(`[redirect to ${location} not followed]`);
    lines.push(isText(contentType, bytes) ? new TextDecoder().decode(bytes) : `[binary body: ${contentType || 'unknown type'}, ${bytes.length} bytes]`);
    const text = capResultText(lines.join('\n'));
    return complete ? text : `${text}\n[response cut at ${limit} bytes]`;
  }
}

/** The owner's headers, lower-cased, without those the client must set. */
function ownerHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if (!CLIENT_HEADERS.has(lower)) result[lower] = value;
  }
  return result;
}

/** `url` with the arguments added as query parameters (arrays repeated, objects as JSON text, nulls left out). */
export function withQuery(url: string, args: JsonObject): string {
  const target = new URL(url);
  for (const [name, value] of Object.entries(args)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      if (item === null || item === undefined) continue;
      target.searchParams.append(name, typeof item === 'object' ? JSON.stringify(item) : String(item));
    }
  }
  return target.toString();
}

function headerText(value: string | string[] | undefined): string {
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

/** Text types, and untyped bodies that decode as UTF-8. */
function isText(contentType: string, bytes: Buffer): boolean {
  if (contentType) return TEXT_TYPE.test(contentType);
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
