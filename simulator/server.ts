// The vendor simulator: a protocol-exact stand-in for the OpenAI and Anthropic HTTP APIs (DESIGN 7).
// Plain node:http with keep-alive, so it stays cheap enough to be the benchmark's upstream.
//
// Per request: read the body, record it, take a matching fault, wait latencyMs (+ the fault's delayMs),
// check auth, answer an injected status, then run the endpoint handler.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { handleCountTokens, handleMessages } from './anthropic-messages.ts';
import { anthropicId } from './anthropic-message-body.ts';
import { handleControl } from './control.ts';
import { sendJson, type Exchange, type SimulatorState } from './exchange.ts';
import { FaultQueue } from './faults.ts';
import { isRecord } from './json-narrow.ts';
import { parseMultipart } from './multipart-form.ts';
import { handleChatCompletions } from './openai-chat.ts';
import { handleEmbeddings } from './openai-embeddings.ts';
import { handleImageGenerations } from './openai-images.ts';
import { handleModels } from './openai-models.ts';
import { handleModerations } from './openai-moderations.ts';
import { handleCreateResponse, handleDeleteResponse, handleRetrieveResponse } from './openai-responses.ts';
import { handleSpeech } from './openai-speech.ts';
import { handleTranscriptions } from './openai-transcriptions.ts';
import { handleCreateVideo, handleDeleteVideo, handleListVideos, handleRetrieveVideo, handleVideoContent } from './openai-videos.ts';
import { PromptCache } from './prompt-cache.ts';
import { flattenHeaders, RequestRecorder } from './recorder.ts';
import { ResponseStore } from './response-store.ts';
import { RouteTable, type RouteMatch } from './route-table.ts';
import type { Simulator, SimulatorOptions } from './types.ts';
import { VideoStore } from './video-store.ts';
import {
  anthropicError,
  anthropicStatusError,
  OPENAI_MISSING_KEY,
  openAiError,
  openAiStatusError,
} from './vendor-errors.ts';

export type { Fault, RecordedRequest, Simulator, SimulatorOptions } from './types.ts';
// The deterministic rules, for tests that compute expected replies and usage.
export {
  countTokens, ECHO_MARKER, FILLER_WORDS, finishText, IMAGE_TOKENS, padToTokens, replyText, splitIntoChunks,
  thinkingText, toolResultReplyText, truncateToTokens,
} from './text.ts';
export { sampleFromSchema } from './json-sample.ts';
export { OPENAI_CACHE_BLOCK_TOKENS, OPENAI_CACHE_MIN_PROMPT_TOKENS, openAiMessageTokens, openAiPromptTokens } from './openai-chat-prompt.ts';
export { anthropicBlockTokens, anthropicPromptParts, anthropicPromptTokens } from './anthropic-prompt.ts';
export { thinkingSignature } from './anthropic-reply.ts';
export { defaultEmbeddingDimensions, embeddingVector, encodeBase64 } from './openai-embeddings.ts';
export { LEGACY_MODERATION_CATEGORIES, moderationCategories, moderationScore, OMNI_MODERATION_CATEGORIES, TRIGGERED_SCORE } from './openai-moderations.ts';
export { IMAGE_OUTPUT_TOKENS, PIXEL_PNG_BASE64 } from './openai-images.ts';
export { transcriptionText } from './openai-transcriptions.ts';
export { deterministicBytes } from './media-bytes.ts';
export { SPEECH_CONTENT_TYPES, SPEECH_MAGIC, SPEECH_SAMPLE_RATE, speechAudio, speechPcm, type SpeechFormat } from './openai-speech.ts';
export { VIDEO_FAIL_MARKER, VIDEO_FAILURE_MESSAGE, videoPhase } from './video-store.ts';
export { videoContent, type VideoVariant } from './openai-videos.ts';

export const DEFAULT_OPTIONS: Required<SimulatorOptions> = {
  host: '127.0.0.1',
  port: 0,
  latencyMs: 0,
  chunkDelayMs: 0,
  streamChunks: 8,
  replyTokens: 16,
  recordLimit: 1000,
  videoPollsToComplete: 2,
};

type Vendor = 'openai' | 'anthropic';

interface Route {
  handler: (exchange: Exchange, requestId: string) => void | Promise<void>;
  /** Whether the body must be JSON (a multipart body passes: the handler reads `exchange.form`). */
  json: boolean;
}

/** Keys are `METHOD /path`; a `:name` segment matches one path segment (route-table.ts). */
const ROUTES = new Map<string, Route>([
  ['POST /v1/chat/completions', { handler: handleChatCompletions, json: true }],
  ['POST /v1/embeddings', { handler: handleEmbeddings, json: true }],
  ['POST /v1/moderations', { handler: handleModerations, json: true }],
  ['POST /v1/images/generations', { handler: handleImageGenerations, json: true }],
  ['POST /v1/audio/transcriptions', { handler: handleTranscriptions, json: false }],
  ['POST /v1/audio/speech', { handler: handleSpeech, json: true }],
  ['POST /v1/videos', { handler: handleCreateVideo, json: true }],
  ['GET /v1/videos', { handler: handleListVideos, json: false }],
  ['GET /v1/videos/:id', { handler: handleRetrieveVideo, json: false }],
  ['DELETE /v1/videos/:id', { handler: handleDeleteVideo, json: false }],
  ['GET /v1/videos/:id/content', { handler: handleVideoContent, json: false }],
  ['POST /v1/responses', { handler: handleCreateResponse, json: true }],
  ['GET /v1/responses/:id', { handler: handleRetrieveResponse, json: false }],
  ['DELETE /v1/responses/:id', { handler: handleDeleteResponse, json: false }],
  ['GET /v1/models', { handler: handleModels, json: false }],
  ['POST /v1/messages', { handler: handleMessages, json: true }],
  ['POST /v1/messages/count_tokens', { handler: handleCountTokens, json: true }],
]);

const TABLE = new RouteTable(ROUTES);

function findRoute(method: string, path: string): RouteMatch<Route> | undefined {
  const models = ROUTES.get('GET /v1/models');
  if (method === 'GET' && path.startsWith('/v1/models/') && models !== undefined) return { route: models, params: {} };
  return TABLE.find(method, path);
}

function vendorOf(path: string, request: IncomingMessage): Vendor {
  if (path.startsWith('/v1/messages')) return 'anthropic';
  return path.startsWith('/v1/models') && request.headers['anthropic-version'] !== undefined ? 'anthropic' : 'openai';
}

function authorised(vendor: Vendor, request: IncomingMessage): boolean {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && /^Bearer\s+\S/i.test(authorization)) return true;
  const apiKey = request.headers['x-api-key'];
  return vendor === 'anthropic' && typeof apiKey === 'string' && apiKey.trim() !== '';
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

class SimulatorServer implements SimulatorState {
  readonly options: Required<SimulatorOptions>;
  readonly promptCache = new PromptCache();
  readonly faults = new FaultQueue();
  readonly recorder: RequestRecorder;
  readonly videos = new VideoStore();
  readonly responses = new ResponseStore();
  url = '';
  #sequence = 0;
  #requestSequence = 0;

  constructor(options: Required<SimulatorOptions>) {
    this.options = options;
    this.recorder = new RequestRecorder(() => this.options.recordLimit);
  }

  nextSequence(): number {
    this.#sequence += 1;
    return this.#sequence;
  }

  nextRequestId(): string {
    this.#requestSequence += 1;
    return anthropicId('req', this.#requestSequence);
  }

  reset(): void {
    this.faults.clear();
    this.recorder.clear();
    this.promptCache.clear();
    this.videos.clear();
    this.responses.clear();
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt >= 0 ? url.slice(0, queryAt) : url;
    const method = request.method ?? 'GET';
    const bodyBytes = await readBody(request);
    const contentType = request.headers['content-type'] ?? '';
    const isMultipart = contentType.startsWith('multipart/');
    const bodyText = bodyBytes.toString('utf8');
    const parsed = isMultipart ? { ok: true as const, value: undefined } : parseJson(bodyText);
    const json = parsed.ok ? parsed.value : undefined;
    if (path.startsWith('/_sim/')) return handleControl(this, method, path, json, response);
    this.recorder.add({ method, path, headers: flattenHeaders(request.headers), body: bodyText, json, at: Date.now() });
    const vendor = vendorOf(path, request);
    const requestId = this.nextRequestId();
    const anthropicHeaders = vendor === 'anthropic' ? { 'request-id': requestId } : {};
    const form = isMultipart && !path.startsWith('/_sim/') ? parseMultipart(bodyBytes, contentType) : undefined;
    const model = isRecord(json) && typeof json.model === 'string' ? json.model : form?.fields.get('model');
    const fault = this.faults.take({ path, model, stream: isRecord(json) && json.stream === true });
    const delay = this.options.latencyMs + (fault?.delayMs ?? 0);
    if (delay > 0) {
      await sleep(delay);
      if (response.destroyed) return;
    }
    if (!authorised(vendor, request)) {
      return vendor === 'anthropic'
        ? sendJson(response, 401, anthropicError('authentication_error', 'x-api-key header is required', requestId), anthropicHeaders)
        : sendJson(response, 401, OPENAI_MISSING_KEY);
    }
    if (fault?.status !== undefined) {
      const body = fault.body ?? (vendor === 'anthropic' ? anthropicStatusError(fault.status, requestId) : openAiStatusError(fault.status, model));
      return sendJson(response, fault.status, body, { ...anthropicHeaders, ...fault.headers });
    }
    const found = findRoute(method, path);
    if (found === undefined) return notFound(vendor, method, path, requestId, response);
    if (found.route.json && !parsed.ok) return badJson(vendor, requestId, response);
    const query = new URLSearchParams(queryAt >= 0 ? url.slice(queryAt + 1) : '');
    const exchange: Exchange = {
      method, path, query, params: found.params, headers: request.headers, json, bodyText, bodyBytes, form, response, fault, state: this,
    };
    await found.route.handler(exchange, requestId);
  }
}

function notFound(vendor: Vendor, method: string, path: string, requestId: string, response: ServerResponse): void {
  if (vendor === 'anthropic') {
    return sendJson(response, 404, anthropicError('not_found_error', 'Not Found', requestId), { 'request-id': requestId });
  }
  sendJson(response, 404, openAiError(`Invalid URL (${method} ${path})`, 'invalid_request_error'));
}

function badJson(vendor: Vendor, requestId: string, response: ServerResponse): void {
  if (vendor === 'anthropic') {
    return sendJson(response, 400, anthropicError('invalid_request_error', 'There was an error parsing the body of your request', requestId), { 'request-id': requestId });
  }
  sendJson(response, 400, openAiError(
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
    'invalid_request_error',
  ));
}

function failSafely(response: ServerResponse, error: unknown): void {
  if (response.headersSent) {
    response.destroy(error instanceof Error ? error : undefined);
    return;
  }
  sendJson(response, 500, openAiError('The simulator failed while handling the request.', 'server_error'));
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const resolved: Required<SimulatorOptions> = { ...DEFAULT_OPTIONS };
  for (const [key, value] of Object.entries(options)) if (value !== undefined) Object.assign(resolved, { [key]: value });
  const simulator = new SimulatorServer(resolved);
  const server = createServer({ keepAlive: true }, (request, response) => {
    simulator.handle(request, response).catch((error: unknown) => failSafely(response, error));
  });
  server.keepAliveTimeout = 30_000;
  server.headersTimeout = 35_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  resolved.port = port;
  const host = resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host;
  simulator.url = `http://${host}:${port}`;
  return {
    url: simulator.url,
    port,
    options: resolved,
    requests: simulator.recorder.requests,
    lastRequest: (pathPrefix) => simulator.recorder.last(pathPrefix),
    addFault: (fault) => simulator.faults.add(fault),
    reset: () => simulator.reset(),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
  };
}
