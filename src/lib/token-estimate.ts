import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { BytePairCounter } from './byte-pair-counter.ts';

let counter: BytePairCounter | undefined;

/**
 * o200k, from gpt-tokenizer's own rank file and split pattern. Built on the first estimate, not at start (most calls carry
 * the vendor's usage): ~30 ms once, ~5 MB outside the heap for the life of the process.
 */
function o200k(): BytePairCounter {
  if (counter) return counter;
  const require = createRequire(import.meta.url);
  const { O200K_TOKEN_SPLIT_REGEX } = require('gpt-tokenizer/encodingParams/constants') as { O200K_TOKEN_SPLIT_REGEX: RegExp };
  counter = new BytePairCounter(readFileSync(require.resolve('gpt-tokenizer/data/o200k_base.tiktoken')), O200K_TOKEN_SPLIT_REGEX);
  return counter;
}

/**
 * Estimated token count of a text (o200k encoding), for calls whose vendor reported no usage. A client's text is text:
 * `<|endoftext|>` in a prompt counts as the tokens of its characters, as a vendor counts what a client sends.
 */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : o200k().count(text);
}

/** Every string inside a JSON value, joined: what a model reads of a message list or an input. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join('\n');
  if (value && typeof value === 'object') {
    return Object.entries(value as Record<string, unknown>)
      .filter(([key]) => key !== 'image_url' && key !== 'type' && key !== 'role')
      .map(([, item]) => textOf(item))
      .filter(Boolean)
      .join('\n');
  }
  return '';
}
