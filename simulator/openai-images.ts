// POST /v1/images/generations: every image is the same 1×1 PNG (PIXEL_PNG_BASE64). n: 1–10 (dall-e-3: only 1).
// dall-e models answer with `url` (default) or `b64_json` (response_format); dall-e-3 adds revised_prompt = prompt.
// A url is `${simulator url}/_sim/files/img-<sequence>-<index>.png`, served by GET /_sim/files/{name} (control.ts)
// without auth, like the vendor's signed blob URLs.
// gpt-image models always answer with `b64_json` (response_format is ignored), add background / output_format /
// quality / size, and report usage: input_tokens = countTokens(prompt), output_tokens = 1056 per image
// (image_tokens in input_tokens_details is 0).

import type { Exchange } from './exchange.ts';
import { selfUrl, sendJson, unixSeconds } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { countTokens } from './text.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export const PIXEL_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const IMAGE_OUTPUT_TOKENS = 1056;
/** Names GET /_sim/files/{name} serves (with the PNG bytes). */
export const IMAGE_FILE_NAME = /^img-\d+-\d+\.png$/;

const GPT_IMAGE_SIZES: readonly string[] = ['1024x1024', '1024x1536', '1536x1024'];
const GPT_IMAGE_QUALITIES: readonly string[] = ['low', 'medium', 'high'];
const GPT_IMAGE_FORMATS: readonly string[] = ['png', 'jpeg', 'webp'];

function pick(value: unknown, allowed: readonly string[], fallback: string): string {
  return typeof value === 'string' && allowed.includes(value) ? value : fallback;
}

export function handleImageGenerations(exchange: Exchange): void {
  const body = exchange.json;
  const response = exchange.response;
  if (!isRecord(body)) return sendJson(response, 400, openAiError('Invalid body: expected a JSON object.', 'invalid_request_error'));
  if (typeof body.prompt !== 'string' || body.prompt === '') {
    return sendJson(response, 400, openAiError("Missing required parameter: 'prompt'.", 'invalid_request_error', 'prompt', 'missing_required_parameter'));
  }
  const model = typeof body.model === 'string' ? body.model : 'dall-e-2';
  if (model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(model));
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10) {
    return sendJson(response, 400, openAiError(`Invalid 'n': expected an integer between 1 and 10, but got ${JSON.stringify(n)} instead.`, 'invalid_request_error', 'n'));
  }
  if (model === 'dall-e-3' && n !== 1) return sendJson(response, 400, openAiError('You must provide n=1 for this model.', 'invalid_request_error'));
  const gptImage = model.startsWith('gpt-image');
  const format = body.response_format ?? 'url';
  if (!gptImage && format !== 'url' && format !== 'b64_json') {
    return sendJson(response, 400, openAiError(
      `Invalid value: ${JSON.stringify(format)}. Supported values are: 'url' and 'b64_json'.`, 'invalid_request_error', 'response_format', 'invalid_value',
    ));
  }
  const base64 = gptImage || format === 'b64_json';
  const sequence = exchange.state.nextSequence();
  const base = selfUrl(exchange);
  const data = Array.from({ length: n }, (_, index) => ({
    ...(base64 ? { b64_json: PIXEL_PNG_BASE64 } : { url: `${base}/_sim/files/img-${sequence}-${index}.png` }),
    ...(model === 'dall-e-3' ? { revised_prompt: body.prompt } : {}),
  }));
  const result: Record<string, unknown> = { created: unixSeconds(), data };
  if (gptImage) {
    result.background = body.background === 'transparent' ? 'transparent' : 'opaque';
    result.output_format = pick(body.output_format, GPT_IMAGE_FORMATS, 'png');
    result.quality = pick(body.quality, GPT_IMAGE_QUALITIES, 'medium');
    result.size = pick(body.size, GPT_IMAGE_SIZES, '1024x1024');
    const input = countTokens(String(body.prompt));
    const output = IMAGE_OUTPUT_TOKENS * n;
    result.usage = {
      input_tokens: input,
      output_tokens: output,
      total_tokens: input + output,
      input_tokens_details: { text_tokens: input, image_tokens: 0 },
    };
  }
  sendJson(response, 200, result);
}
