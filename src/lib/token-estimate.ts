import { createRequire } from 'node:module';

type CountTokens = (text: string) => number;

let counter: CountTokens | undefined;

/** The tokenizer's tables take ~70 MB: loaded on the first estimate, not at start (most calls carry the vendor's usage). */
function countTokens(text: string): number {
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer') as { countTokens: CountTokens }).countTokens;
  return counter(text);
}

/** Estimated token count of a text (o200k encoding), for calls whose vendor reported no usage. */
export function estimateTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
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
