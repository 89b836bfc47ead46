import { isAscii, transcode } from 'node:buffer';

/**
 * Below this many bytes V8's own decoder is as fast as the transcoder's fixed cost (measured: 1 KB 2.2 against 2.7 µs, 4 KB
 * 8.5 against 4.1 µs).
 */
const TRANSCODE_FROM_BYTES = 2048;

/**
 * UTF-8 bytes as a string: the same string as `bytes.toString('utf8')`, faster for long text that is not all ASCII.
 *
 * Node 20's `toString('utf8')` (V8's decoder) reads non-ASCII text a byte at a time: a 57 KB conversation with a few accented
 * letters took 76 µs, one in Cyrillic 102 µs, against 5 µs for the same length of ASCII. ICU's converter (`transcode`, in
 * every Node build with ICU) turns the same bytes into UTF-16 in 25–27 µs, and a UTF-16 buffer becomes a string by a copy.
 * ASCII keeps V8's path, which makes a one-byte string; text the converter refuses (bytes that are not UTF-8) keeps it too,
 * so invalid bytes become U+FFFD exactly as before.
 */
export function decodeUtf8(bytes: Buffer): string {
  if (bytes.length < TRANSCODE_FROM_BYTES || isAscii(bytes)) return bytes.toString('utf8');
  let utf16: Buffer;
  try {
    utf16 = transcode(bytes, 'utf8', 'ucs2');
  } catch {
    return bytes.toString('utf8');
  }
  return utf16.toString('ucs2');
}
