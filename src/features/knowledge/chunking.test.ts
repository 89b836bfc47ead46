import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { chunkDocument, DEFAULT_MAX_CHARS, splitBySize } from './chunking.ts';

const WORDS = ['river', 'stone', 'lantern', 'meadow', 'copper', 'harbor', 'violet', 'engine', 'pepper', 'quartz', 'saddle', 'timber'];

/** Deterministic prose: `count` words in sentences of seven, paragraphs of five sentences. */
function prose(count: number): string {
  let text = '';
  for (let index = 0; index < count; index += 1) {
    text += `${WORDS[(index * 7) % WORDS.length]}${index}`;
    if (index === count - 1) text += '.';
    else if (index % 35 === 34) text += '.\n\n';
    else if (index % 7 === 6) text += '. ';
    else text += ' ';
  }
  return text;
}

const wordsOf = (text: string): string[] => text.split(/\s+/).filter(Boolean);

/** Every piece starts and ends on a word boundary of the source (no word is cut). */
function assertWholeWords(source: string, pieces: readonly string[]): void {
  const sourceWords = new Set(wordsOf(source));
  for (const piece of pieces) for (const word of wordsOf(piece)) assert.ok(sourceWords.has(word), `"${word}" is not a whole word of the source (piece: ${JSON.stringify(piece.slice(0, 60))}…)`);
}

describe('plain text', () => {
  test('a short text is one chunk, trimmed, with normalised line endings and blank lines', () => {
    assert.deepEqual(chunkDocument('  Hello world.\r\n\r\n\r\n\r\nSecond   \r\nline.  ', 'text'), ['Hello world.\n\nSecond\nline.']);
  });

  test('empty or blank input gives no chunks', () => {
    assert.deepEqual(chunkDocument('', 'text'), []);
    assert.deepEqual(chunkDocument(' \n\t\n ', 'markdown'), []);
  });

  test('a long text is cut into pieces of at most 800 characters, never inside a word, covering every word in order', () => {
    const text = prose(1000);
    const chunks = chunkDocument(text, 'text');
    assert.ok(chunks.length > 5, `expected several chunks, got ${chunks.length}`);
    for (const chunk of chunks) assert.ok(chunk.length <= DEFAULT_MAX_CHARS, `chunk of ${chunk.length} characters`);
    assertWholeWords(text, chunks);
    // Dropping each chunk's overlap with the previous one gives the source's words back, in order.
    const all = wordsOf(text);
    let position = 0;
    for (const chunk of chunks) {
      const words = wordsOf(chunk);
      const start = all.indexOf(words[0]!);
      assert.ok(start <= position, 'no word is skipped between chunks');
      assert.deepEqual(words, all.slice(start, start + words.length), 'a chunk is a contiguous run of the source');
      position = start + words.length;
    }
    assert.equal(position, all.length, 'the last chunk ends the text');
  });

  test('consecutive chunks overlap by about 100 characters', () => {
    const chunks = chunkDocument(prose(1000), 'text');
    for (let index = 1; index < chunks.length; index += 1) {
      const previous = chunks[index - 1]!;
      const firstWord = wordsOf(chunks[index]!)[0]!;
      const at = previous.lastIndexOf(firstWord);
      assert.ok(at >= 0, `chunk ${index} starts with words the previous chunk ended with`);
      const overlap = previous.length - at;
      assert.ok(overlap > 0 && overlap <= 100, `overlap of ${overlap} characters`);
      assert.ok(overlap >= 60, `overlap of ${overlap} characters is close to 100`);
    }
  });

  test('cuts prefer a paragraph break, then a sentence end, in the second half of the window', () => {
    const first = 'a'.repeat(5) + ' ' + 'word '.repeat(100).trim() + '.';
    const second = 'next paragraph words here.';
    const [chunk] = splitBySize(`${first}\n\n${second} ${'more '.repeat(200)}`, 600, 0);
    assert.equal(chunk, first);
    const sentences = `${'one two three. '.repeat(30)}tail`;
    const [piece] = splitBySize(sentences, 100, 0);
    assert.ok(piece!.endsWith('.'), `cut at a sentence end: ${JSON.stringify(piece)}`);
    assert.ok(piece!.length <= 100);
  });

  test('a word longer than the limit stays whole, in a chunk of its own', () => {
    const giant = 'x'.repeat(1200);
    const chunks = chunkDocument(`start words ${giant} end words`, 'text');
    assert.ok(chunks.includes(giant) || chunks.some((chunk) => chunk.split(/\s+/).includes(giant)), 'the long word is not cut');
    assertWholeWords(`start words ${giant} end words`, chunks);
    assert.ok(chunks.at(-1)!.endsWith('end words'));
  });

  test('options change the size and the overlap; overlap 0 repeats nothing', () => {
    const text = prose(300);
    const chunks = chunkDocument(text, 'text', { maxChars: 200, overlap: 0 });
    for (const chunk of chunks) assert.ok(chunk.length <= 200);
    assert.equal(chunks.flatMap(wordsOf).length, wordsOf(text).length);
  });
});

describe('markdown', () => {
  const doc = [
    '# Guide',
    '',
    'Intro to the guide.',
    '',
    '## Pricing',
    '',
    'The plan costs 7 credits.',
    '',
    '```sh',
    '# not a heading, a shell comment',
    'echo hi',
    '```',
    '',
    '### Discounts',
    'Students pay half.',
    '',
    '## Support',
    '',
    '# Appendix',
    'Last words.',
  ].join('\n');

  test('sections split at headings, each chunk led by its heading trail; code fences are not headings; empty sections dropped', () => {
    assert.deepEqual(chunkDocument(doc, 'markdown'), [
      '# Guide\nIntro to the guide.',
      '# Guide\n## Pricing\nThe plan costs 7 credits.\n\n```sh\n# not a heading, a shell comment\necho hi\n```',
      '# Guide\n## Pricing\n### Discounts\nStudents pay half.',
      '# Appendix\nLast words.',
    ]);
  });

  test('text before the first heading is a section without a trail', () => {
    assert.deepEqual(chunkDocument('Preface line.\n# Title\nBody.', 'markdown'), ['Preface line.', '# Title\nBody.']);
  });

  test('a long section is cut by size and every piece repeats its heading trail', () => {
    const body = prose(600);
    const chunks = chunkDocument(`# Manual\n## Install\n${body}\n## Next\nShort.`, 'markdown');
    const install = chunks.filter((chunk) => chunk.startsWith('# Manual\n## Install\n'));
    assert.ok(install.length > 2, `the long section gives several pieces, got ${install.length}`);
    for (const chunk of chunks) assert.ok(chunk.length <= DEFAULT_MAX_CHARS, `chunk of ${chunk.length} characters`);
    assertWholeWords(body, install.map((chunk) => chunk.replace('# Manual\n## Install\n', '')));
    assert.equal(chunks.at(-1), '# Manual\n## Next\nShort.');
  });

  test('"#tag" without a space is not a heading; plain text format ignores headings', () => {
    assert.deepEqual(chunkDocument('#tag line\nmore', 'markdown'), ['#tag line\nmore']);
    assert.deepEqual(chunkDocument('# A\nx\n# B\ny', 'text'), ['# A\nx\n# B\ny']);
  });
});
