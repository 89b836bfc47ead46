// POST /v1/images/generations: every image is the same 1×1 PNG.
// dall-e models answer with `url` (or `b64_json` when asked; dall-e-3 adds revised_prompt);
// gpt-image models always answer with `b64_json` and report usage: input_tokens = countTokens(prompt),
// output_tokens = 1056 per image (image_tokens in input_tokens_details is 0).

import type { Exchange } from './exchange.ts';
import { sendJson, unixSeconds } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { countTokens } from './text.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export const PIXEL_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const IMAGE_OUTPUT_TOKENS = 1056;

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
  const gptImage = model.startsWith('gpt-image');
  const base64 = gptImage || body.response_format === 'b64_json';
  const sequence = exchange.state.nextSequence();
  const data = Array.from({ length: n }, (_, index) => ({
    ...(base64 ? { b64_json: PIXEL_PNG_BASE64 } : { url: `https://simulator.invalid/images/img-${sequence}-${index}.png` }),
    ...(model === 'dall-e-3' ? { revised_prompt: body.prompt } : {}),
  }));
  const result: Record<string, unknown> = { created: unixSeconds(), data };
  if (gptImage) {
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
