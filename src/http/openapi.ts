import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify';
import { z } from 'zod';
import type { RouteSettings } from './context.ts';
import { API_TAGS, type ApiTag, type RouteDoc } from './route-doc.ts';

type JsonSchema = Record<string, unknown>;
type AuthMode = NonNullable<RouteSettings['auth']>;

/** The document's own version: the gateway's API generation (SPEC §9), not the package's. */
const API_VERSION = '1';
const OPENAPI_PATH = '/openapi.json';
const DOCS_PREFIX = '/docs';

const JSON_TYPE = 'application/json';

/** Security schemes: who may call what (src/http/plugins/auth.ts). */
const SECURITY_SCHEMES = {
  apiKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'An inference-scope API key: `Authorization: Bearer <key>` (the bare key without `Bearer ` is accepted too).',
  },
  anthropicApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The messages endpoints also take the inference key in `x-api-key`, as Anthropic clients send it.',
  },
  managementKey: {
    type: 'http',
    scheme: 'bearer',
    description: 'A management-scope API key: `Authorization: Bearer <key>`; it acts as its owner on the management API.',
  },
  session: {
    type: 'apiKey',
    in: 'cookie',
    name: 'tollgate_session',
    description:
      'A signed-in session (POST /api/v1/auth/login sets the cookie). Requests other than GET/HEAD/OPTIONS must also send the ' +
      'session\'s CSRF token in the `x-csrf-token` header (GET /api/v1/auth/session gives it).',
  },
  adminToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'The operator\'s admin token (printed at first start, kept in DATA_DIR/admin-token): `Authorization: Bearer <token>`.',
  },
  botToken: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description: 'The bot\'s token as the chat service sends it (the whole header value).',
  },
} as const;

type SchemeName = keyof typeof SECURITY_SCHEMES;
const requirement = (...names: SchemeName[]): Record<string, string[]> => Object.fromEntries(names.map((name) => [name, []]));

function securityOf(auth: AuthMode, settings: RouteSettings): Record<string, string[]>[] {
  switch (auth) {
    case 'key':
      return settings.apiKeyHeader ? [requirement('apiKey'), requirement('anthropicApiKey')] : [requirement('apiKey')];
    case 'anyKey':
      return [requirement('apiKey'), requirement('managementKey')];
    case 'user':
      return [requirement('managementKey'), requirement('session')];
    case 'optionalUser':
      return [{}, requirement('managementKey'), requirement('session')];
    case 'admin':
      return [requirement('adminToken')];
    case 'none':
      // The chat-bot routes check the bot's token themselves.
      return settings.errorShape === 'bot' ? [requirement('botToken')] : [];
  }
}

const ERROR_SCHEMAS: Record<string, JsonSchema> = {
  ErrorA: {
    type: 'object',
    description: 'SPEC 2.10 shape A (chat-completions style and most endpoints).',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: {
          message: { type: 'string' },
          type: { type: 'string' },
          param: { type: ['string', 'null'] },
          code: { type: ['string', 'null'] },
        },
      },
    },
  },
  ErrorB: {
    type: 'object',
    description: 'SPEC 2.10 shape B (the messages endpoints).',
    required: ['type', 'error'],
    properties: {
      type: { const: 'error' },
      error: { type: 'object', required: ['type', 'message'], properties: { type: { type: 'string' }, message: { type: 'string' } } },
      request_id: { type: 'string' },
    },
  },
  ErrorC: {
    type: 'object',
    description: 'SPEC 2.10 shape C (media creation and asynchronous transcription, retired model).',
    required: ['code', 'message', 'original_id'],
    properties: { code: { type: 'integer' }, message: { type: 'string' }, original_id: { type: 'string' } },
  },
  BotError: {
    type: 'object',
    description: 'The chat-bot integration\'s failure answer (SPEC 4.1).',
    required: ['ok', 'message'],
    properties: { ok: { const: false }, message: { type: 'string' } },
  },
};

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const errorResponse = (description: string, schema: JsonSchema): JsonSchema => ({ description, content: { [JSON_TYPE]: { schema } } });

function errorResponses(settings: RouteSettings, auth: AuthMode): Record<string, JsonSchema> {
  const shape = settings.errorShape ?? 'A';
  if (shape === 'bot') return { '4XX': errorResponse('Refused', ref('BotError')), '5XX': errorResponse('Failed', ref('BotError')) };
  const routeError =
    shape === 'B' ? ref('ErrorB') : shape === 'C' ? { oneOf: [ref('ErrorA'), ref('ErrorC')], description: 'Shape C for a retired model, shape A otherwise.' } : ref('ErrorA');
  const responses: Record<string, JsonSchema> = {};
  // A missing or bad credential is answered in shape A on every endpoint (SPEC §5/§7).
  if (auth !== 'none') responses['401'] = errorResponse('Missing or invalid credential', ref('ErrorA'));
  responses['4XX'] = errorResponse('Refused (bad input, not found, limits, retired model, …)', routeError);
  responses['5XX'] = errorResponse('Failed (upstream or gateway)', routeError);
  return responses;
}

/** Definitions hoisted out of converted schemas (recursive ones) into components.schemas. */
class SchemaBook {
  readonly components: Record<string, JsonSchema> = { ...ERROR_SCHEMAS };
  private counter = 0;

  convert(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
    const converted = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
    delete converted.$schema;
    const defs = (converted.$defs ?? {}) as Record<string, JsonSchema>;
    delete converted.$defs;
    const renamed = new Map<string, string>();
    for (const name of Object.keys(defs)) renamed.set(`#/$defs/${name}`, `#/components/schemas/Schema${++this.counter}`);
    let root: string | undefined;
    const rewrite = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(rewrite);
      if (!value || typeof value !== 'object') return value;
      const out: JsonSchema = {};
      for (const [key, inner] of Object.entries(value)) {
        if (key === '$ref' && typeof inner === 'string') {
          if (inner === '#') out[key] = (root ??= `#/components/schemas/Schema${++this.counter}`);
          else out[key] = renamed.get(inner) ?? inner;
        } else out[key] = rewrite(inner);
      }
      return out;
    };
    for (const [name, definition] of Object.entries(defs)) {
      this.components[renamed.get(`#/$defs/${name}`)!.split('/').pop()!] = rewrite(definition) as JsonSchema;
    }
    const result = rewrite(converted) as JsonSchema;
    if (root !== undefined) {
      this.components[root.split('/').pop()!] = result;
      return { $ref: root };
    }
    return result;
  }
}

function tagOf(url: string): ApiTag {
  if (url.startsWith('/admin/')) return 'admin';
  if (url.startsWith('/api/bot')) return 'chatbot';
  if (url.startsWith('/api/v1/')) return 'management';
  if (/^\/v1\/(assistant|database)\//.test(url)) return 'assistants';
  if (/^\/(v1\/imagegen|v1\/media|media|api\/v2\/media|v1\/files)\//.test(url)) return 'tasks';
  if (url.startsWith('/v1/')) return 'inference';
  return 'health';
}

/** `/v1/models/:id` → `/v1/models/{id}` and the names of its parameters. */
function openApiPath(url: string): { path: string; names: string[] } {
  const names: string[] = [];
  const path = url
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) {
        names.push(segment.slice(1));
        return `{${segment.slice(1)}}`;
      }
      if (segment === '*') {
        names.push('path');
        return '{path}';
      }
      return segment;
    })
    .join('/');
  return { path, names };
}

function objectProperties(schema: JsonSchema, what: string, url: string): { properties: Record<string, JsonSchema>; required: Set<string> } {
  if (schema.type !== 'object' || typeof schema.properties !== 'object') throw new Error(`${url}: the declared ${what} schema is not an object`);
  return { properties: schema.properties as Record<string, JsonSchema>, required: new Set((schema.required as string[] | undefined) ?? []) };
}

function parameters(doc: RouteDoc, url: string, names: string[], book: SchemaBook): JsonSchema[] {
  const out: JsonSchema[] = [];
  const params = doc.params ? objectProperties(book.convert(doc.params, 'input'), 'params', url).properties : {};
  for (const name of names) out.push({ name, in: 'path', required: true, schema: params[name] ?? { type: 'string' } });
  if (doc.query) {
    const { properties, required } = objectProperties(book.convert(doc.query, 'input'), 'query', url);
    for (const [name, schema] of Object.entries(properties)) {
      const { description, ...rest } = schema;
      out.push({ name, in: 'query', required: required.has(name), schema: rest, ...(typeof description === 'string' ? { description } : {}) });
    }
  }
  return out;
}

function successResponse(doc: RouteDoc, book: SchemaBook): JsonSchema {
  const content: Record<string, JsonSchema> = {};
  if (doc.produces) {
    content[doc.produces] = { schema: { type: 'string', ...(doc.produces.startsWith('text/') ? {} : { format: 'binary' }) } };
  } else {
    const item = doc.response ? book.convert(doc.response, 'output') : undefined;
    const schema = doc.list
      ? {
          type: 'object',
          required: ['object', 'data'],
          properties: { object: { const: 'list' }, data: { type: 'array', items: item ?? { type: 'object' } }, next_cursor: { type: ['string', 'null'] } },
        }
      : item;
    content[JSON_TYPE] = schema ? { schema } : {};
  }
  if (doc.stream) content['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events (with `stream: true`).' } };
  return { description: 'OK', content };
}

interface Operation {
  method: string;
  url: string;
  settings: RouteSettings;
}

function operationOf(route: Operation, book: SchemaBook, operationIds: Set<string>): JsonSchema {
  const { settings, url } = route;
  const doc = settings.doc!;
  const auth: AuthMode = settings.auth ?? 'key';
  const { names } = openApiPath(url);
  const operation: JsonSchema = { tags: [doc.tag ?? tagOf(url)], summary: doc.summary };
  if (doc.description) operation.description = doc.description;
  let operationId = (settings.name ?? `${route.method} ${url}`).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_+|_+$/g, '');
  if (operationIds.has(operationId)) operationId = `${operationId}_${`${route.method}${url}`.replace(/[^A-Za-z0-9]+/g, '_')}`;
  operationIds.add(operationId);
  operation.operationId = operationId;
  const parameterList = parameters(doc, url, names, book);
  if (parameterList.length > 0) operation.parameters = parameterList;
  if (doc.body) operation.requestBody = { required: true, content: { [JSON_TYPE]: { schema: book.convert(doc.body, 'input') } } };
  if (doc.form) operation.requestBody = { required: true, content: { 'multipart/form-data': { schema: book.convert(doc.form, 'input') } } };
  operation.security = securityOf(auth, settings);
  operation.responses = { '200': successResponse(doc, book), ...errorResponses(settings, auth) };
  return operation;
}

/** Routes whose declaration is missing: a new route must declare itself (test/openapi.test.ts fails otherwise). */
export interface UndeclaredRoute {
  method: string;
  url: string;
}

/**
 * Records every route as it is registered (Fastify `onRoute`) and builds the OpenAPI 3.1 document from their
 * declarations (`config.doc`, src/http/route-doc.ts) on first use; the document is built once and kept.
 */
export class OpenApiRegistry {
  private readonly routes: RouteOptions[] = [];
  private text: string | undefined;

  /** Call before any route is registered: later hooks (the admin door's) still change `config`, read at build time. */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      this.routes.push(route);
    });
  }

  /** Every route as method and URL; the explicit HEAD ones only (Fastify adds a HEAD twin to each GET). */
  private operations(): Operation[] {
    const out: Operation[] = [];
    const gets = new Set<string>();
    const all: Operation[] = [];
    for (const route of this.routes) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        const settings = (route.config ?? {}) as RouteSettings;
        all.push({ method: method.toUpperCase(), url: route.url, settings });
        if (method.toUpperCase() === 'GET') gets.add(route.url);
      }
    }
    for (const operation of all) {
      if (operation.method === 'HEAD' && gets.has(operation.url)) continue;
      if (operation.settings.doc?.hidden) continue;
      out.push(operation);
    }
    return out;
  }

  undeclared(): UndeclaredRoute[] {
    return this.operations()
      .filter((operation) => operation.settings.doc === undefined)
      .map(({ method, url }) => ({ method, url }));
  }

  document(): JsonSchema {
    const book = new SchemaBook();
    const paths: Record<string, Record<string, JsonSchema>> = {};
    const operationIds = new Set<string>();
    for (const operation of this.operations()) {
      const { path } = openApiPath(operation.url);
      const item = (paths[path] ??= {});
      const settings: RouteSettings = operation.settings.doc
        ? operation.settings
        : { ...operation.settings, doc: { summary: `${operation.method} ${operation.url} (undocumented)` } };
      item[operation.method.toLowerCase()] = operationOf({ ...operation, settings }, book, operationIds);
    }
    const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => a.localeCompare(b)));
    return {
      openapi: '3.1.1',
      info: {
        title: 'Tollgate',
        version: API_VERSION,
        description:
          'Self-hosted gateway to hosted AI models. The SPEC endpoints (OpenAI- and Anthropic-compatible inference, tasks, ' +
          'assistants, chat bots), the management API (/api/v1) and the admin API (/admin/v1). Generated from the route schemas.',
      },
      tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
      paths: sortedPaths,
      components: { schemas: book.components, securitySchemes: SECURITY_SCHEMES },
    };
  }

  /** The document as JSON text, built on the first call and kept (routes do not change once the app is ready). */
  json(): string {
    return (this.text ??= JSON.stringify(this.document()));
  }
}

const SCALAR_CONFIGURATION = {
  url: OPENAPI_PATH,
  pageTitle: 'Tollgate API reference',
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: 'json',
} as const;

/** Headers of the reference's own answers that are passed on (the gateway sets its own connection and security headers). */
const PASSED_HEADERS = ['content-type', 'cache-control', 'etag', 'last-modified', 'location'];

/**
 * Scalar's Fastify plugin, loaded on the first visit of /docs: its module carries the whole renderer as a 4 MB string,
 * 20 MB of heap that every gateway process would otherwise hold from start for a page few visit. It runs in a Fastify
 * instance of its own, without a listener, and the gateway's /docs routes hand it their requests (inject).
 */
class LazyReference {
  private server: Promise<FastifyInstance> | undefined;

  private start(): Promise<FastifyInstance> {
    return (this.server ??= (async () => {
      const { default: scalarApiReference } = await import('@scalar/fastify-api-reference');
      const reference = Fastify({ logger: false });
      await reference.register(scalarApiReference, { routePrefix: DOCS_PREFIX, configuration: SCALAR_CONFIGURATION });
      await reference.ready();
      return reference;
    })().catch((error: unknown) => {
      this.server = undefined;
      throw error;
    }));
  }

  readonly handle = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const reference = await this.start();
    const answer = await reference.inject({ method: 'GET', url: request.url, headers: { accept: request.headers.accept ?? '*/*' } });
    for (const name of PASSED_HEADERS) {
      const value = answer.headers[name];
      if (value !== undefined) reply.header(name, value);
    }
    return reply.code(answer.statusCode).send(answer.rawPayload);
  };

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await (await server).close();
  }
}

/**
 * GET /openapi.json and GET /docs (Scalar, served from the package: its script is bundled in node_modules; no CDN, no
 * fonts, no proxy, no telemetry — nothing loads from the internet). Both public.
 */
export async function registerOpenApiRoutes(app: FastifyInstance, registry: OpenApiRegistry): Promise<void> {
  const settings = { auth: 'none', name: 'openapi', doc: { summary: 'This document', hidden: true } } satisfies RouteSettings;
  app.get(OPENAPI_PATH, { config: settings }, async (_request, reply) => reply.type(JSON_TYPE).send(registry.json()));
  const reference = new LazyReference();
  const docs = { config: { auth: 'none', name: 'docs', doc: { summary: 'API reference', hidden: true } } satisfies RouteSettings };
  app.get(DOCS_PREFIX, docs, reference.handle);
  app.get(`${DOCS_PREFIX}/*`, docs, reference.handle);
  app.addHook('onClose', () => reference.close());
}
