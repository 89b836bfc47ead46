// GET /v1/models and /v1/models/{id} in both vendors' shapes; the Anthropic shape is chosen when the
// request carries an `anthropic-version` header (both vendors use the same path).

import type { Exchange } from './exchange.ts';
import { sendJson } from './exchange.ts';
import { anthropicError, openAiModelNotFound } from './vendor-errors.ts';

const OPENAI_MODELS: readonly string[] = [
  'gpt-6.1-sol', 'gpt-5.6-sol', 'gpt-5.6-terra', 'gpt-5.6-luna', 'gpt-5.5', 'gpt-5.4', 'gpt-5', 'gpt-5-mini',
  'gpt-4o', 'gpt-4o-mini', 'gpt-4.1', 'gpt-4.1-mini', 'o4-mini', 'text-embedding-3-small', 'text-embedding-3-large',
  'omni-moderation-latest', 'text-moderation-latest', 'whisper-1', 'gpt-image-1', 'dall-e-3',
];

const ANTHROPIC_MODELS: readonly [id: string, name: string][] = [
  ['claude-opus-4-8', 'Claude Opus 4.8'],
  ['claude-opus-4-7', 'Claude Opus 4.7'],
  ['claude-opus-4-6', 'Claude Opus 4.6'],
  ['claude-sonnet-4-6', 'Claude Sonnet 4.6'],
  ['claude-sonnet-4-5-20250929', 'Claude Sonnet 4.5'],
  ['claude-haiku-4-5-20251001', 'Claude Haiku 4.5'],
];

const CREATED = 1_700_000_000;

function openAiModel(id: string): Record<string, unknown> {
  return { id, object: 'model', created: CREATED, owned_by: id.startsWith('gpt') || id.startsWith('o') ? 'system' : 'openai' };
}

function anthropicModel(id: string, name: string): Record<string, unknown> {
  return { type: 'model', id, display_name: name, created_at: new Date(CREATED * 1000).toISOString() };
}

export function handleModels(exchange: Exchange, requestId: string): void {
  const id = exchange.path.length > '/v1/models/'.length ? decodeURIComponent(exchange.path.slice('/v1/models/'.length)) : undefined;
  const anthropic = exchange.headers['anthropic-version'] !== undefined;
  if (anthropic) {
    const headers = { 'request-id': requestId };
    if (id === undefined) {
      const data = ANTHROPIC_MODELS.map(([model, name]) => anthropicModel(model, name));
      return sendJson(exchange.response, 200, { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null }, headers);
    }
    if (id.startsWith('missing-')) return sendJson(exchange.response, 404, anthropicError('not_found_error', `model: ${id}`, requestId), headers);
    const known = ANTHROPIC_MODELS.find(([model]) => model === id);
    return sendJson(exchange.response, 200, anthropicModel(id, known?.[1] ?? id), headers);
  }
  if (id === undefined) return sendJson(exchange.response, 200, { object: 'list', data: OPENAI_MODELS.map(openAiModel) });
  if (id.startsWith('missing-')) return sendJson(exchange.response, 404, openAiModelNotFound(id));
  sendJson(exchange.response, 200, openAiModel(id));
}
