import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, test } from 'node:test';
import { countTokens } from 'gpt-tokenizer';
import { BytePairCounter, PIECE_CHARS } from './byte-pair-counter.ts';
import { estimateTokens } from './token-estimate.ts';

/** gpt-tokenizer's own count of `text` with every character as text: the count the estimates must give. */
const exact = (text: string): number => countTokens(text, { disallowedSpecial: new Set() });

/** A seeded generator, so a failure names a text that comes back on the next run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

/** Letters of several cases and scripts, marks, digits, contractions, line ends, emoji (with a modifier), lone surrogates, special-token text. */
const PARTS = ['a', 'b', 'e', ' ', '  ', '\n', '\r\n', '\t', '1', '23', '456', '!', '?', "'s", "'LL", "'Re", 'Ж', 'ы', 'АБВ', '中', '文', '😀', '👍🏽', '\u0301', 'é', 'ß', 'ﬁ', 'ـ', 'ا', 'ل', '\ud800', '\udc00', 'AbC', 'HTTP', 'ID', '<|endoftext|>', '<|im_start|>', '/', '\\', '"', '{', '}', '\u00a0', '\u2028'];

function mixedTexts(count: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: count }, () => {
    let text = '';
    for (let length = 1 + Math.floor(next() * 60); length > 0; length--) text += PARTS[Math.floor(next() * PARTS.length)];
    return text;
  });
}

function word(length: number, seed: number, first = 0x61, letters = 26): string {
  const next = random(seed);
  let text = '';
  while (text.length < length) text += String.fromCharCode(first + Math.floor(next() * letters));
  return text;
}

describe('estimateTokens (o200k)', () => {
  test("gives gpt-tokenizer's count for this repository's code and documents", () => {
    const files = ['README.md', ...readdirSync('docs').map((name) => `docs/${name}`), 'src/app.ts', 'src/lib/byte-pair-counter.ts'];
    for (const file of files.filter((name) => name.endsWith('.md') || name.endsWith('.ts'))) {
      const text = readFileSync(file, 'utf8');
      assert.equal(estimateTokens(text), exact(text), file);
    }
  });

  test("gives gpt-tokenizer's count for its own multilingual test samples", () => {
    const plans = readFileSync(createRequire(import.meta.url).resolve('gpt-tokenizer/data/TestPlans.txt'), 'utf8');
    const samples = [...plans.matchAll(/^Sample: (.*)$/gm)].map((match) => match[1]!);
    assert.ok(samples.length > 50, `${samples.length} samples`);
    for (const sample of samples) assert.equal(estimateTokens(sample), exact(sample), JSON.stringify(sample));
  });

  test("gives gpt-tokenizer's count for 3,000 texts of mixed scripts, marks, emoji, lone surrogates and special-token text", () => {
    for (const text of mixedTexts(3_000, 7)) assert.equal(estimateTokens(text), exact(text), JSON.stringify(text));
  });

  test('counts a written-out special token as its characters', () => {
    assert.equal(estimateTokens('<|endoftext|>'), exact('<|endoftext|>'));
    assert.ok(estimateTokens('<|endoftext|>') > 1, 'not the one special token');
    assert.equal(estimateTokens(''), 0);
  });

  test(`is exact for a word of up to ${PIECE_CHARS} characters, whose merge is long`, () => {
    for (const [index, text] of [word(PIECE_CHARS, 1), word(PIECE_CHARS - 1, 2, 0x430, 32), 'xq'.repeat(PIECE_CHARS / 2)].entries()) {
      assert.equal(estimateTokens(text), exact(text), `word ${index}`);
    }
  });

  test('counts a longer word a slice at a time, within a token a cut of the exact count', () => {
    for (const [index, text] of [word(30_000, 3), word(20_000, 4, 0x430, 32), `${word(12_000, 5)}\u{1f600}${word(12_000, 6)}`].entries()) {
      const cuts = Math.ceil(text.length / PIECE_CHARS) - 1;
      const difference = Math.abs(estimateTokens(text) - exact(text));
      assert.ok(difference <= cuts, `word ${index}: ${difference} tokens off, ${cuts} cuts`);
    }
  });

  test('never cuts a word inside a character: a cut that would split a surrogate pair falls one code unit earlier', () => {
    // 'a' then CJK letters outside the BMP (two code units each): code unit PIECE_CHARS is the second half of a pair.
    const text = `a${Array.from({ length: PIECE_CHARS }, (_, index) => String.fromCodePoint(0x20000 + (index % 500))).join('')}`;
    assert.match(text, /^\p{L}+$/u, 'one word');
    assert.equal(estimateTokens(text), exact(text.slice(0, PIECE_CHARS - 1)) + exact(text.slice(PIECE_CHARS - 1, 2 * PIECE_CHARS - 1)) + exact(text.slice(2 * PIECE_CHARS - 1)));
  });

  test('counts a word of a million letters (the rescanning merge took 7 s for 160,000)', { timeout: 20_000 }, () => {
    const text = word(1_000_000, 8);
    const tokens = estimateTokens(text);
    const perSlice = estimateTokens(text.slice(0, PIECE_CHARS));
    assert.ok(Math.abs(tokens - (perSlice * text.length) / PIECE_CHARS) < tokens * 0.02, `${tokens} tokens, ${perSlice} in its first slice`);
  });
});

/** A rank file by hand: each token's bytes in base64, then its rank. */
const rankFile = (tokens: string[]): Buffer => Buffer.from(tokens.map((token, rank) => `${Buffer.from(token).toString('base64')} ${rank}\n`).join(''));
const WORDS = /\p{L}+|\s+/gu;

describe('BytePairCounter', () => {
  test('merges the lowest-ranked pair first, not the leftmost', () => {
    // "ab" is left of "bc" but ranks after it: b+c merge first, then nothing more does. Leftmost first would give ab, cd.
    const counter = new BytePairCounter(rankFile(['a', 'b', 'c', 'd', 'bc', 'ab', 'cd']), WORDS);
    assert.equal(counter.count('abcd'), 3);
    assert.equal(counter.count('ab cd'), 3, 'two words and the space: ab, " ", cd');
    assert.equal(counter.count('dcba'), 4, 'no pair of it is a token');
  });

  test('a rank file out of order or not base64 is refused', () => {
    assert.throws(() => new BytePairCounter(Buffer.from('YQ== 0\nYg== 2\n'), WORDS), /rank 2 where 1 was due/);
    assert.throws(() => new BytePairCounter(Buffer.from('YQ== 0\nY*== 1\n'), WORDS), /not base64/);
  });
});
