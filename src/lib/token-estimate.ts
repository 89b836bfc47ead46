import { createRequire } from 'node:module';

type CountTokens = (text: string, options: { disallowedSpecial: Set<string> }) => number;

let counter: CountTokens | undefined;

/**
 * A client's text is text: `<|endoftext|>` in a prompt is counted as the tokens of its characters, as a vendor counts what a
 * client sends, never as the special token. By default the tokenizer throws on it, which failed the call after the vendor
 * had answered (a 500, the charge lost).
 */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** The tokenizer's tables take ~70 MB: loaded on the first estimate, not at start (most calls carry the vendor's usage). */
function countTokens(text: string): number {
  counter ??= (createRequire(import.meta.url)('gpt-tokenizer') as { countTokens: CountTokens }).countTokens;
  return counter(text, AS_TEXT);
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
