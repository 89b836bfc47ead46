// POST /v1/embeddings: deterministic unit vectors.
//
// Each input's vector is seeded from the FNV-1a hash of its text (token-id arrays: of their JSON), filled
// with xorshift32 values in [-1, 1), rounded to float32 and normalised to length 1 (then rounded to float32
// again), so `float` and `base64` (little-endian float32) encodings agree exactly. Dimensions: `dimensions`
// when given, else 3072 for text-embedding-3-large and 1536 for every other model.
// Usage: prompt_tokens = total_tokens = Σ countTokens(text) for strings, array length for token ids.

import type { Exchange } from './exchange.ts';
import { sendJson } from './exchange.ts';
import { isRecord } from './json-narrow.ts';
import { countTokens } from './text.ts';
import { openAiError, openAiModelNotFound } from './vendor-errors.ts';

export function defaultEmbeddingDimensions(model: string): number {
  return model.startsWith('text-embedding-3-large') ? 3072 : 1536;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The embedding of one input (a string, or token ids) as float32 values. */
export function embeddingVector(input: string | readonly number[], dimensions: number): Float32Array {
  let state = fnv1a(typeof input === 'string' ? input : JSON.stringify(input)) || 1;
  const vector = new Float32Array(dimensions);
  let sumOfSquares = 0;
  for (let index = 0; index < dimensions; index += 1) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    vector[index] = ((state >>> 0) / 0x1_0000_0000) * 2 - 1;
    sumOfSquares += (vector[index] ?? 0) ** 2;
  }
  const norm = Math.sqrt(sumOfSquares) || 1;
  for (let index = 0; index < dimensions; index += 1) vector[index] = (vector[index] ?? 0) / norm;
  return vector;
}

export function encodeBase64(vector: Float32Array): string {
  const buffer = Buffer.allocUnsafe(vector.length * 4);
  for (let index = 0; index < vector.length; index += 1) buffer.writeFloatLE(vector[index] ?? 0, index * 4);
  return buffer.toString('base64');
}

type EmbeddingInput = string | number[];

/** The list of inputs, or an error message naming what is wrong. */
function normaliseInput(input: unknown): EmbeddingInput[] | string {
  if (typeof input === 'string') return input === '' ? "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference." : [input];
  if (!Array.isArray(input) || input.length === 0) return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";
  if (input.every((item) => typeof item === 'number')) return [input as number[]];
  const inputs: EmbeddingInput[] = [];
  for (const item of input) {
    if (typeof item === 'string' && item !== '') inputs.push(item);
    else if (Array.isArray(item) && item.length > 0 && item.every((token) => typeof token === 'number')) inputs.push(item as number[]);
    else return "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.";
  }
  return inputs;
}

export function handleEmbeddings(exchange: Exchange): void {
  const body = exchange.json;
  const response = exchange.response;
  if (!isRecord(body)) return sendJson(response, 400, openAiError('Invalid body: expected a JSON object.', 'invalid_request_error'));
  if (typeof body.model !== 'string' || body.model === '') return sendJson(response, 400, openAiError('you must provide a model parameter', 'invalid_request_error'));
  if (body.input === undefined) {
    return sendJson(response, 400, openAiError("Missing required parameter: 'input'.", 'invalid_request_error', 'input', 'missing_required_parameter'));
  }
  if (body.model.startsWith('missing-')) return sendJson(response, 404, openAiModelNotFound(body.model));
  const inputs = normaliseInput(body.input);
  if (typeof inputs === 'string') return sendJson(response, 400, openAiError(inputs, 'invalid_request_error', 'input'));
  const dimensions = body.dimensions ?? defaultEmbeddingDimensions(body.model);
  if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > 8192) {
    return sendJson(response, 400, openAiError(`Invalid 'dimensions': expected an integer >= 1, but got ${JSON.stringify(dimensions)} instead.`, 'invalid_request_error', 'dimensions'));
  }
  const base64 = body.encoding_format === 'base64';
  let tokens = 0;
  const data = inputs.map((input, index) => {
    tokens += typeof input === 'string' ? countTokens(input) : input.length;
    const vector = embeddingVector(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? encodeBase64(vector) : Array.from(vector) };
  });
  sendJson(response, 200, { object: 'list', data, model: body.model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
}
