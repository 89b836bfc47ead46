/**
 * Counts the tokens of a byte-pair encoding (tiktoken's: split the text with the encoding's pattern, then merge each piece's
 * bytes, lowest-ranked adjacent pair first, leftmost on a tie) from the encoding's rank file, `<base64 bytes> <rank>` a line.
 *
 * Why by hand, beside gpt-tokenizer (which ships the rank file and the pattern used here, and checks this count in the
 * tests): gpt-tokenizer holds o200k's 200,000 tokens as strings in a Map, which took 150–460 ms to build and +55–62 MB of
 * RSS for the life of the process, at the first estimate a gateway made. Here the tokens are one byte array and an
 * open-addressing table of ranks: ~5 MB, outside the JavaScript heap. And its merge rescans every pair after each merge,
 * which is quadratic in a piece's length: one 160,000-letter word held the event loop for 7 s.
 */
export class BytePairCounter {
  readonly #split: RegExp;
  /** Every token's bytes, by rank: token `r` is `#bytes[#starts[r]] … #bytes[#starts[r + 1] - 1]`. */
  readonly #bytes: Uint8Array;
  readonly #starts: Uint32Array;
  /** Open addressing by FNV-1a of the bytes: rank + 1, 0 for an empty slot. */
  readonly #slots: Int32Array;
  readonly #mask: number;
  /** A slice's UTF-8 bytes: at most three a UTF-16 code unit. */
  readonly #piece = new Uint8Array(3 * PIECE_CHARS);
  readonly #utf8 = new TextEncoder();
  readonly #merge = new PieceMerge(3 * PIECE_CHARS);
  readonly #rankInPiece = (start: number, end: number): number => this.#rank(this.#piece, start, end);

  /** `ranks`: the rank file's bytes, ranks 0, 1, 2 … in order. `split`: the encoding's pattern (its flags are kept). */
  constructor(ranks: Uint8Array, split: RegExp) {
    this.#split = new RegExp(split.source, split.flags.includes('g') ? split.flags : `${split.flags}g`);
    const { bytes, starts } = decodeRanks(ranks);
    this.#bytes = bytes;
    this.#starts = starts;
    const count = starts.length - 1;
    let size = 1;
    while (size < count * 2.5) size *= 2;
    this.#slots = new Int32Array(size);
    this.#mask = size - 1;
    for (let rank = 0; rank < count; rank++) {
      let slot = fnv(bytes, starts[rank]!, starts[rank + 1]!) & this.#mask;
      while (this.#slots[slot] !== 0) slot = (slot + 1) & this.#mask;
      this.#slots[slot] = rank + 1;
    }
  }

  /** The number of tokens `text` encodes to, every character as text (a written-out special token is its characters). */
  count(text: string): number {
    const split = this.#split;
    split.lastIndex = 0;
    let tokens = 0;
    for (let match = split.exec(text); match !== null; match = split.exec(text)) {
      const piece = match[0];
      if (piece.length === 0) split.lastIndex++;
      else tokens += this.#countPiece(piece);
    }
    return tokens;
  }

  /**
   * A piece longer than `PIECE_CHARS` (a word of tens of thousands of letters, base64) is counted a slice at a time, so the
   * work and the scratch memory stay bounded; the count then differs from the exact one by about a token a cut (0 or ±1 in
   * the tests).
   */
  #countPiece(piece: string): number {
    if (piece.length <= PIECE_CHARS) return this.#countBytes(piece);
    let tokens = 0;
    for (let start = 0; start < piece.length; ) {
      let end = Math.min(start + PIECE_CHARS, piece.length);
      if (end < piece.length && isLowSurrogate(piece.charCodeAt(end))) end--;
      tokens += this.#countBytes(piece.slice(start, end));
      start = end;
    }
    return tokens;
  }

  #countBytes(piece: string): number {
    // A lone surrogate becomes U+FFFD, as gpt-tokenizer's own encoding writes it.
    const length = this.#utf8.encodeInto(piece, this.#piece).written;
    // Every single byte is a token of a byte-level encoding.
    if (length === 1 || this.#rank(this.#piece, 0, length) >= 0) return 1;
    return this.#merge.parts(length, this.#rankInPiece);
  }

  /** The rank of `bytes[start … end - 1]` as one token, or -1 when it is none. */
  #rank(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    for (let slot = fnv(bytes, start, end) & this.#mask; ; slot = (slot + 1) & this.#mask) {
      const entry = this.#slots[slot]!;
      if (entry === 0) return -1;
      const from = this.#starts[entry - 1]!;
      if (this.#starts[entry]! - from === length && sameBytes(this.#bytes, from, bytes, start, length)) return entry - 1;
    }
  }
}

/** The longest slice of a piece merged at once, in UTF-16 code units. */
export const PIECE_CHARS = 8_192;

/**
 * The merge of one piece, counting its parts. The parts are a linked list over byte offsets, and the adjacent pairs wait in
 * a binary heap keyed by (rank, offset), so the lowest rank — the leftmost of equals — merges first, as tiktoken's rescan
 * does, in O(n log n). A heap entry is stale, and skipped, once its part has been taken into the one before it (its pair
 * rank is then -1) or its pair has grown: a part's pair only ever grows, so its rank never returns to an old value.
 */
class PieceMerge {
  #next: Int32Array;
  #previous: Int32Array;
  #pairRank: Int32Array;
  #heap: Float64Array;
  #heapSize = 0;

  constructor(capacity: number) {
    this.#next = new Int32Array(capacity + 1);
    this.#previous = new Int32Array(capacity + 1);
    this.#pairRank = new Int32Array(capacity + 1);
    this.#heap = new Float64Array(3 * capacity);
  }

  /** How many tokens a piece of `length` bytes merges into; `rank` gives the rank of its bytes `start … end - 1`, or -1. */
  parts(length: number, rank: (start: number, end: number) => number): number {
    const next = this.#next;
    const previous = this.#previous;
    const pairRank = this.#pairRank;
    this.#heapSize = 0;
    for (let at = 0; at < length; at++) {
      next[at] = at + 1;
      previous[at] = at - 1;
      pairRank[at] = at + 2 <= length ? rank(at, at + 2) : -1;
      if (pairRank[at]! >= 0) this.#push(pairRank[at]!, at);
    }
    let parts = length;
    while (this.#heapSize > 0) {
      const key = this.#pop();
      const at = key % OFFSETS;
      const pair = (key - at) / OFFSETS;
      if (pairRank[at] !== pair) continue;
      // `at` takes in the part after it; its own pair, and the pair of the part before it, now end further on.
      const absorbed = next[at]!;
      const end = next[absorbed]!;
      pairRank[absorbed] = -1;
      next[at] = end;
      if (end < length) previous[end] = at;
      parts--;
      pairRank[at] = end < length ? rank(at, next[end]!) : -1;
      if (pairRank[at]! >= 0) this.#push(pairRank[at]!, at);
      const before = previous[at]!;
      if (before >= 0) {
        pairRank[before] = rank(before, end);
        if (pairRank[before]! >= 0) this.#push(pairRank[before]!, before);
      }
    }
    return parts;
  }

  #push(rank: number, at: number): void {
    const heap = this.#heap;
    const key = rank * OFFSETS + at;
    let index = this.#heapSize++;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (heap[parent]! <= key) break;
      heap[index] = heap[parent]!;
      index = parent;
    }
    heap[index] = key;
  }

  #pop(): number {
    const heap = this.#heap;
    const top = heap[0]!;
    const last = heap[--this.#heapSize]!;
    let index = 0;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= this.#heapSize) break;
      if (child + 1 < this.#heapSize && heap[child + 1]! < heap[child]!) child++;
      if (heap[child]! >= last) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = last;
    return top;
  }
}

/** Offsets in a heap key: above any byte offset of a slice (`3 * PIECE_CHARS`). */
const OFFSETS = 2 ** 16;

const BASE64 = new Int8Array(256).fill(-1);
for (const [index, char] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[char.charCodeAt(0)] = index;

/** The rank file's tokens, decoded into one array in rank order. A line out of order or malformed is an error: the file is the package's. */
function decodeRanks(file: Uint8Array): { bytes: Uint8Array; starts: Uint32Array } {
  const bytes = new Uint8Array(Math.ceil((file.length * 3) / 4));
  let lines = 0;
  for (let at = file.indexOf(NEWLINE); at >= 0; at = file.indexOf(NEWLINE, at + 1)) lines++;
  const starts = new Uint32Array(lines + 2);
  let count = 0;
  let written = 0;
  let at = 0;
  while (at < file.length) {
    let bits = 0;
    let held = 0;
    for (; at < file.length && file[at] !== SPACE; at++) {
      if (file[at] === EQUALS) continue;
      const value = BASE64[file[at]!]!;
      if (value < 0) throw new Error(`rank file: not base64 at byte ${at}`);
      bits = (bits << 6) | value;
      held += 6;
      if (held >= 8) {
        held -= 8;
        bytes[written++] = (bits >> held) & 0xff;
      }
    }
    let rank = 0;
    for (at++; at < file.length && file[at] !== NEWLINE; at++) rank = rank * 10 + file[at]! - ZERO;
    at++;
    if (rank !== count) throw new Error(`rank file: rank ${rank} where ${count} was due`);
    starts[++count] = written;
  }
  return { bytes: bytes.slice(0, written), starts: starts.slice(0, count + 1) };
}

const SPACE = 0x20;
const EQUALS = 0x3d;
const NEWLINE = 0x0a;
const ZERO = 0x30;

function fnv(bytes: Uint8Array, start: number, end: number): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ bytes[at]!, 0x01000193);
  return hash >>> 0;
}

function sameBytes(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, length: number): boolean {
  for (let offset = 0; offset < length; offset++) if (a[aStart + offset] !== b[bStart + offset]) return false;
  return true;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
