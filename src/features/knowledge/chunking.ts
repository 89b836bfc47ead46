/**
 * How a document becomes retrievable chunks.
 *
 * - Plain text is cut by size: pieces of at most `maxChars` characters (default 800), each starting `overlap` characters
 *   (default 100) before the previous one ended, so a fact on a boundary is whole in at least one piece. A cut is made at
 *   the last paragraph break, else sentence end, else whitespace of the window's second half; never inside a word (a
 *   single word longer than `maxChars` becomes a piece of its own, longer than the limit). The overlap also starts at a
 *   word boundary.
 * - Markdown is first split into sections at ATX headings (`#` to `######`, outside fenced code blocks); each section is
 *   then cut by size like plain text, and every piece starts with the section's heading trail (its ancestors' heading
 *   lines and its own), so a piece read alone still says what it is about. Sections without body text are not pieces.
 * - Line endings are normalised to `\n`, trailing spaces dropped, runs of blank lines collapsed to one; empty input
 *   gives no chunks.
 */

export type DocumentFormat = 'text' | 'markdown';

export interface ChunkingOptions {
  /** Largest piece in characters (UTF-16 units), heading trail included (unless the trail takes more than half of it). */
  maxChars?: number;
  /** Characters repeated from the end of one piece at the start of the next. */
  overlap?: number;
}

export const DEFAULT_MAX_CHARS = 800;
export const DEFAULT_OVERLAP = 100;

/** Below this share of `maxChars`, a heading trail is not allowed to shrink a section's body budget further. */
const MIN_BODY_SHARE = 0.5;

export function chunkDocument(text: string, format: DocumentFormat, options: ChunkingOptions = {}): string[] {
  const maxChars = Math.max(1, options.maxChars ?? DEFAULT_MAX_CHARS);
  const overlap = Math.min(Math.max(0, options.overlap ?? DEFAULT_OVERLAP), Math.floor(maxChars / 2));
  const normalised = normalise(text);
  if (!normalised) return [];
  if (format === 'text') return splitBySize(normalised, maxChars, overlap);
  const chunks: string[] = [];
  for (const section of markdownSections(normalised)) {
    const trail = section.trail.join('\n');
    if (!trail) {
      chunks.push(...splitBySize(section.body, maxChars, overlap));
      continue;
    }
    const budget = Math.max(maxChars - trail.length - 1, Math.floor(maxChars * MIN_BODY_SHARE));
    for (const piece of splitBySize(section.body, budget, Math.min(overlap, Math.floor(budget / 2)))) chunks.push(`${trail}\n${piece}`);
  }
  return chunks;
}

function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const isSpace = (character: string | undefined): boolean => character !== undefined && /\s/.test(character);

/** Where to end a piece that starts at `start`: the best boundary in the second half of the window, else the next space. */
function breakPoint(text: string, start: number, maxChars: number): number {
  const end = start + maxChars;
  if (end >= text.length) return text.length;
  const window = text.slice(start, end + 1);
  const floor = Math.floor(maxChars / 2);
  for (const pattern of [/\n\n/g, /[.!?;:](?=\s)|\n/g]) {
    let best = -1;
    for (const match of window.matchAll(pattern)) {
      const after = match.index + match[0].length;
      if (match.index >= floor && after <= maxChars) best = after;
    }
    if (best > 0) return start + best;
  }
  // The last whitespace within the window (a break at `end` itself is fine when a space follows it).
  for (let index = end; index > start; index -= 1) if (isSpace(text[index])) return index;
  // One word longer than the window: keep it whole.
  let index = end;
  while (index < text.length && !isSpace(text[index])) index += 1;
  return index;
}

/** The first word start at or after `from` (skipping the rest of a word `from` falls inside). */
function wordStartFrom(text: string, from: number): number {
  let index = from;
  if (index > 0 && !isSpace(text[index - 1])) while (index < text.length && !isSpace(text[index])) index += 1;
  while (index < text.length && isSpace(text[index])) index += 1;
  return index;
}

export function splitBySize(text: string, maxChars: number, overlap: number): string[] {
  const pieces: string[] = [];
  let start = wordStartFrom(text, 0);
  while (start < text.length) {
    const end = breakPoint(text, start, maxChars);
    const piece = text.slice(start, end).trim();
    if (piece) pieces.push(piece);
    if (end >= text.length) break;
    const afterEnd = wordStartFrom(text, end);
    const next = overlap > 0 ? wordStartFrom(text, end - overlap) : afterEnd;
    // The overlap must move forward; when no word starts inside it, continue right after this piece.
    start = next > start && next < end ? next : afterEnd;
  }
  return pieces;
}

interface Section {
  /** Heading lines from the outermost ancestor down to this section's own heading (empty before the first heading). */
  trail: string[];
  body: string;
}

const HEADING = /^(#{1,6})[ \t]+\S/;
const FENCE = /^[ \t]{0,3}(`{3,}|~{3,})/;

function markdownSections(text: string): Section[] {
  const sections: Section[] = [];
  const trail: Array<{ level: number; line: string }> = [];
  let body: string[] = [];
  let fence: string | undefined;
  const close = (): void => {
    const content = body.join('\n').trim();
    if (content) sections.push({ trail: trail.map((heading) => heading.line), body: content });
    body = [];
  };
  for (const line of text.split('\n')) {
    const fenceMatch = FENCE.exec(line);
    if (fenceMatch) {
      const marker = fenceMatch[1]!;
      if (fence === undefined) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length) fence = undefined;
    }
    const heading = fence === undefined && !fenceMatch ? HEADING.exec(line) : null;
    if (!heading) {
      body.push(line);
      continue;
    }
    close();
    const level = heading[1]!.length;
    while (trail.length > 0 && trail[trail.length - 1]!.level >= level) trail.pop();
    trail.push({ level, line: line.trim() });
  }
  close();
  return sections;
}
