// POST /v1/moderations: deterministic category scores.
//
// Scores: every category gets a small hash-derived score in [0.000001, 0.009); trigger words (case-insensitive)
// raise one category to 0.9: "kill" or "murder" → violence, "hate" → hate, "suicide" → self-harm.
// A category is flagged when its score ≥ 0.5; `flagged` when any category is. text-moderation-* models
// report the 11 legacy categories, every other model (default omni-moderation-latest) the 13 omni ones.
// `input` may be a string, a string list (one result each) or a list of text / image_url parts (one result).

import type { Exchange } from './exchange.ts';
import { sendJson } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export const LEGACY_MODERATION_CATEGORIES: readonly string[] = [
  'hate', 'hate/threatening', 'harassment', 'harassment/threatening', 'self-harm', 'self-harm/intent',
  'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
];

export const OMNI_MODERATION_CATEGORIES: readonly string[] = [
  'harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent',
  'self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
];

/** Categories an image input applies to (omni models). */
const IMAGE_CATEGORIES = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

const TRIGGERS: readonly [pattern: RegExp, category: string][] = [
  [/kill|murder/i, 'violence'],
  [/hate/i, 'hate'],
  [/suicide/i, 'self-harm'],
];

export const TRIGGERED_SCORE = 0.9;

export function moderationCategories(model: string): readonly string[] {
  return model.startsWith('text-moderation') ? LEGACY_MODERATION_CATEGORIES : OMNI_MODERATION_CATEGORIES;
}

function smallScore(text: string, category: string): number {
  let hash = 0x811c9dc5;
  const key = `${category}\u0000${text}`;
  for (let index = 0; index < key.length; index += 1) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
  return 0.000001 + ((hash >>> 0) % 9000) / 1_000_000;
}

/** Score of one category for a text (see the rule at the top of this file). */
export function moderationScore(text: string, category: string): number {
  for (const [pattern, triggered] of TRIGGERS) if (triggered === category && pattern.test(text)) return TRIGGERED_SCORE;
  return smallScore(text, category);
}

interface ModerationInput {
  text: string;
  hasImage: boolean;
}

function moderationResult(input: ModerationInput, categories: readonly string[], omni: boolean): Record<string, unknown> {
  const flags: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const appliedTypes: Record<string, string[]> = {};
  let flagged = false;
  for (const category of categories) {
    const score = moderationScore(input.text, category);
    scores[category] = score;
    flags[category] = score >= 0.5;
    flagged ||= score >= 0.5;
    appliedTypes[category] = input.hasImage && IMAGE_CATEGORIES.has(category) ? ['text', 'image'] : ['text'];
  }
  const result: Record<string, unknown> = { flagged, categories: flags, category_scores: scores };
  if (omni) result.category_applied_input_types = appliedTypes;
  return result;
}

function normaliseInput(input: unknown): ModerationInput[] | undefined {
  if (typeof input === 'string') return [{ text: input, hasImage: false }];
  if (!Array.isArray(input) || input.length === 0) return undefined;
  if (input.every((item) => typeof item === 'string')) return input.map((text: string) => ({ text, hasImage: false }));
  const texts: string[] = [];
  let hasImage = false;
  for (const part of input) {
    if (!isRecord(part)) return undefined;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image_url') hasImage = true;
    else return undefined;
  }
  return [{ text: texts.join('\n'), hasImage }];
}

export function handleModerations(exchange: Exchange): void {
  const body = exchange.json;
  const response = exchange.response;
  if (!isRecord(body)) return sendJson(response, 400, openAiError('Invalid body: expected a JSON object.', 'invalid_request_error'));
  if (body.input === undefined) {
    return sendJson(response, 400, openAiError("Missing required parameter: 'input'.", 'invalid_request_error', 'input', 'missing_required_parameter'));
  }
  const model = typeof body.model === 'string' ? body.model : 'omni-moderation-latest';
  if (model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(model));
  const inputs = normaliseInput(body.input);
  if (inputs === undefined) {
    return sendJson(response, 400, openAiError("Invalid value for 'input': expected a string, an array of strings or an array of content parts.", 'invalid_request_error', 'input'));
  }
  const omni = !model.startsWith('text-moderation');
  const categories = moderationCategories(model);
  sendJson(response, 200, {
    id: `modr-${exchange.state.nextSequence()}`,
    model,
    results: inputs.map((input) => moderationResult(input, categories, omni)),
  });
}
