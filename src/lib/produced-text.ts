/**
 * A flattening comes once at least 32 pieces were appended since the last one, and at least one piece for every 256
 * characters of text (so the copying costs at most 256 characters a piece, however long the stream).
 */
const FLATTEN_AFTER_PIECES = 32;
const COPY_PER_PIECE = 256;
/** The flattening reads' results, folded where an optimizing compiler cannot prove them unused and drop the reads. */
let flatteningReads = 0;

/**
 * What a stream has produced so far, a delta at a time: the text a charge is estimated from when the vendor reports no
 * usage. With `+=` alone V8 keeps a rope of the pieces until the stream ends, and a piece cut out of a frame's text (a
 * scanned delta of 13 characters or more is a slice of it, not a copy) keeps that whole frame alive with it: 160 frames
 * with 20-character deltas kept 54 KB for 3 KB of text. So the rope is flattened now and then (V8 copies it into one
 * string at the first character read, and lets the pieces and their frames go): at most 32 pieces, or one for every 256
 * characters of text, are kept beyond the text itself, and the copying costs at most 256 characters a piece.
 */
export class ProducedText {
  #text = '';
  #pieces = 0;

  add(piece: string): void {
    this.#text += piece;
    this.#pieces += 1;
    if (this.#pieces >= FLATTEN_AFTER_PIECES && this.#pieces * COPY_PER_PIECE >= this.#text.length) {
      this.#pieces = 0;
      flatteningReads ^= this.#text.charCodeAt(0);
    }
  }

  get text(): string {
    return this.#text;
  }
}
